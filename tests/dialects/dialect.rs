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
}
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProgressShape {
    Ours,
    Bare,
    /// `{"lastProgress": {chapterId, positionSec}, "playbackSettings": {no speed}}`.
    LastProgress,
    /// Not recognisable: a list under `data`.
    ListUnderData,
    /// Not recognisable: `{"state": {"track", "offset_s"}}`.
    UnknownWrapper,
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
        }
    }
}

impl Dialect {
    pub fn progress_readable(&self) -> bool {
        !matches!(
            self.progress,
            ProgressShape::ListUnderData | ProgressShape::UnknownWrapper
        )
    }
}
