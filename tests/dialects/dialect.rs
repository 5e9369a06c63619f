//! The axes of the dialect test server and one `Dialect` picked along them.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Envelope {
    Data,
    CodeData,
    Result,
    Bare,
}
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenKey {
    Token,
    AccessToken,
    NestedAuth,
    Jwt,
}
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ids {
    Strings,
    Numbers,
    /// JSON numbers beyond 2^64 (a float would lose their digits).
    Big,
    /// Zero-padded digit strings (`"0042"`), user id included.
    Padded,
}
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListKey {
    Items,
    Content,
    Records,
    Data,
}
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Paging {
    Page,
    Offset,
    Cursor,
    NextAbsolute,
    NextRootRelative,
    NextRelative,
    LinksNext,
    /// Three items per page whatever `pageSize` says, and no paging facts.
    IgnoresPageSize,
    /// The whole list on every request.
    None,
    /// Pages numbered from 0, each echoing its `page` number, `first` and
    /// `last` flags and the `total` (issue 20: "page 1" is the second).
    ZeroBasedEcho,
    /// Pages numbered from 0, two a page whatever `pageSize` says, and the
    /// total only in the outer wrapper: nothing echoed.
    ZeroBasedTotalOnly,
    /// One-based pages with the total only in the outer wrapper.
    TotalInWrapper,
    /// Says there are two books more than it has (a clear "incomplete").
    Overcounts,
}
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorShape {
    CodeMessage,
    Nested,
    FastApiDetail,
    JsonApi,
    NumericCodeAndErrorCode,
    NumericCodeAndError,
    /// HTTP 200 with `{"success": false, "code": N, …}`.
    In200Envelope,
    /// RFC 7807, `application/problem+json`: the code only as the last
    /// segment of the `type` URI.
    ProblemUri,
    /// The code only as the fragment of a documentation link.
    UriFragment,
}
/// How a refused chapter stream answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamRefusal {
    /// The error status with the dialect's error body.
    Status,
    /// HTTP 200 with the dialect's error body as JSON.
    Json200,
    /// HTTP 200 with an HTML page linking to the code's URI.
    Html200,
    /// The error status with such an HTML page.
    Html4xx,
}
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CodeStyle {
    Snake,
    Upper,
    Camel,
    Kebab,
}
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoProgress {
    NotFound,
    NoContent,
    Null,
    EmptyObject,
    EmptyRecord,
    /// `[]` in the envelope.
    EmptyList,
}
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProgressShape {
    Ours,
    Bare,
    /// `{"lastProgress": {chapterId, positionSec}, "playbackSettings": {no speed}}`.
    LastProgress,
    /// A list under `data` holding the one record of this book.
    ListUnderData,
    /// `{"state": {"track", "offset_s"}}`.
    UnknownWrapper,
    /// A list of every book's record; this book's among them.
    ListOfAllBooks,
    /// Not readable: the place in a form no key names (`"loc": "c@30"`).
    Opaque,
    /// Not readable: a chapter index (never an id) and a position.
    ChapterIndex,
    /// Not readable: milliseconds under a key without a unit.
    BareMillis,
}
/// How a book names its authors, narrators and series.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum People {
    /// `author` string, no narrator or series (the reference server's book
    /// without them).
    Ours,
    /// `narrator` string, `series` string beside `seriesSequence` "#n".
    FlatStrings,
    /// `authors` objects, `narrators` list, `series_name` + `series_index` number.
    SnakeNumbers,
    /// Audiobookshelf-like: `series: [{id, name, sequence}]`.
    SeriesList,
    /// A series object without a name: unreadable, so unknown.
    Unreadable,
}
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LicenseWords {
    StatusValid,
    StateActive,
    ValidFlag,
    Licensed,
}

/// How a throttle says when to come back (`Retry-After`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RetryForm {
    /// Delta seconds: `Retry-After: 1`.
    Seconds,
    /// An HTTP date, beside the answer's own `Date`.
    Date,
    /// No `Retry-After` at all: the client's own back-off decides.
    Absent,
}

/// The server refuses every request at `place` with `status` (429 or 503)
/// from the first such request on, for `lasts`, asking to wait `secs`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Throttling {
    pub place: crate::server::Place,
    pub status: u16,
    pub form: RetryForm,
    pub secs: u64,
    pub lasts: std::time::Duration,
}

/// How a cursor is written (issue 31): a cursor is sent back whatever
/// its characters, and followed as a link never.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CursorChars {
    /// `cur-2`.
    Plain,
    /// With `+`, `/` and `=`, as base64 has them.
    Symbols,
    /// Base64 that begins with `/` (1 in 64 of them).
    LeadingSlash,
    /// That one under a bare `next`, whose key says neither link nor cursor.
    LeadingSlashUnderNext,
}

/// How chapter and book lengths are given (issue 31): named seconds, or a
/// number without a unit in seconds, milliseconds or minutes, or one that
/// fits no unit of the audio.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lengths {
    NamedSeconds,
    UnitlessSeconds,
    UnitlessMillis,
    UnitlessMinutes,
    /// `"duration": 7` on a 120 s chapter: 7 s, 7 ms, 7 minutes all wrong.
    UnitlessNoUnitFits,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Dialect {
    pub envelope: Envelope,
    pub token: TokenKey,
    pub ids: Ids,
    pub list_key: ListKey,
    pub paging: Paging,
    pub error: ErrorShape,
    pub code_style: CodeStyle,
    pub no_progress: NoProgress,
    pub progress: ProgressShape,
    pub license: LicenseWords,
    pub people: People,
    /// The server's identity header prefix.
    pub prefix: &'static str,
    /// Serve under `/gw/api/v1`, but hand out root-relative `/api/v1/…` URLs.
    pub gateway: bool,
    pub stream_refusal: StreamRefusal,
    /// Requests of one kind answered "slow down" for a while.
    pub throttle: Option<Throttling>,
    /// JSON answers are gzipped for a request that takes gzip.
    pub gzip: bool,
    pub cursor: CursorChars,
    pub lengths: Lengths,
}

impl Default for Dialect {
    fn default() -> Self {
        Dialect {
            envelope: Envelope::Data,
            token: TokenKey::Token,
            ids: Ids::Strings,
            list_key: ListKey::Items,
            paging: Paging::Page,
            error: ErrorShape::CodeMessage,
            code_style: CodeStyle::Snake,
            no_progress: NoProgress::NotFound,
            progress: ProgressShape::Ours,
            license: LicenseWords::StatusValid,
            people: People::Ours,
            prefix: "X-Service",
            gateway: false,
            stream_refusal: StreamRefusal::Status,
            throttle: None,
            gzip: false,
            cursor: CursorChars::Plain,
            lengths: Lengths::NamedSeconds,
        }
    }
}

impl Dialect {
    pub fn progress_readable(&self) -> bool {
        !matches!(
            self.progress,
            ProgressShape::Opaque | ProgressShape::ChapterIndex | ProgressShape::BareMillis
        )
    }

    /// The books the server says it has (more than it has when it overcounts).
    pub fn reported_books(&self) -> Option<usize> {
        match self.paging {
            Paging::Overcounts => Some(crate::server::BOOKS + 2),
            _ => None,
        }
    }
}

impl Dialect {
    /// A length as this dialect gives it: its key and value.
    pub fn length_field(&self, secs: u32) -> (&'static str, serde_json::Value) {
        let secs = f64::from(secs);
        match self.lengths {
            Lengths::NamedSeconds => ("durationSec", serde_json::json!(secs)),
            Lengths::UnitlessSeconds => ("duration", serde_json::json!(secs)),
            Lengths::UnitlessMillis => ("duration", serde_json::json!(secs * 1000.0)),
            Lengths::UnitlessMinutes => ("duration", serde_json::json!(secs / 60.0)),
            Lengths::UnitlessNoUnitFits => ("duration", serde_json::json!(7)),
        }
    }

    /// Whether earmark can know the lengths (else they are unknown).
    pub fn lengths_readable(&self) -> bool {
        self.lengths != Lengths::UnitlessNoUnitFits
    }

    /// The cursor that starts the page after `from` items.
    pub fn cursor_for(&self, from: usize) -> String {
        match self.cursor {
            CursorChars::Plain => format!("cur-{from}"),
            CursorChars::Symbols => format!("eyJ+b2Zm/c2V0{from}=="),
            CursorChars::LeadingSlash | CursorChars::LeadingSlashUnderNext => {
                format!("/eyJvZmZzZXQi+{from}/OjJ9==")
            }
        }
    }

    /// The items before the page a cursor starts (`None`: not ours).
    pub fn cursor_from(&self, c: &str) -> Option<usize> {
        (0..=crate::server::BOOKS).find(|n| self.cursor_for(*n) == c)
    }

    /// The key the next cursor sits under.
    pub fn cursor_key(&self) -> &'static str {
        match self.cursor {
            CursorChars::LeadingSlashUnderNext => "next",
            _ => "nextCursor",
        }
    }
}
