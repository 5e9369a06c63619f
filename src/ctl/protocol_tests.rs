use super::*;
use proptest::prelude::*;

fn req(line: &str) -> Result<Request, (Value, Refusal)> {
    decode(line.as_bytes())
}

fn code(line: &str) -> Code {
    req(line).unwrap_err().1.code
}

#[test]
fn the_examples_of_the_docs_decode() {
    let r = req(r#"{"id": 1, "command": ["seek", "+30"]}"#).unwrap();
    assert_eq!(r.id, json!(1));
    assert_eq!(r.ask, Ask::Seek(Seek::By(30.0)));
    let r = req(r#"{"id": "a", "command": ["seek", "1:30"]}"#).unwrap();
    assert_eq!((r.id, r.ask), (json!("a"), Ask::Seek(Seek::To(90.0))));
    for (line, ask) in [
        (r#"{"command":["seek",-5]}"#, Ask::Seek(Seek::By(-5.0))),
        (r#"{"command":["seek","-0:05"]}"#, Ask::Seek(Seek::By(-5.0))),
        (r#"{"command":["speed","1.5"]}"#, Ask::Speed(Speed::To(1.5))),
        (
            r#"{"command":["speed","-0.25"]}"#,
            Ask::Speed(Speed::By(-0.25)),
        ),
        (
            r#"{"command":["sleep",25]}"#,
            Ask::Sleep(SleepChoice::Minutes(25)),
        ),
        (
            r#"{"command":["sleep","chapter"]}"#,
            Ask::Sleep(SleepChoice::Chapters(1)),
        ),
        (
            r#"{"command":["sleep","off"]}"#,
            Ask::Sleep(SleepChoice::Off),
        ),
        (r#"{"command":["play"]}"#, Ask::Play(None)),
        (
            r#"{"command":["play","b1",null,12]}"#,
            Ask::Play(Some(Open {
                book: BookId::new("b1"),
                chapter: None,
                at: Some(12.0),
            })),
        ),
        (
            r#"{"version":1,"command":["watch"]}"#,
            Ask::Watch(Watch::Events),
        ),
    ] {
        assert_eq!(req(line).unwrap().ask, ask, "{line}");
    }
}

#[test]
fn each_bad_request_names_its_code() {
    for (line, want) in [
        ("{", Code::BadJson),
        ("\u{fffd}", Code::BadJson),
        ("[1]", Code::BadRequest),
        (r#"{"id":1}"#, Code::BadRequest),
        (r#"{"id":1,"command":[]}"#, Code::BadRequest),
        (r#"{"id":[1],"command":["status"]}"#, Code::BadRequest),
        (r#"{"id":1,"command":["dance"]}"#, Code::UnknownCommand),
        (r#"{"id":1,"command":["status", 1]}"#, Code::BadArgument),
        (r#"{"id":1,"command":["seek","soon"]}"#, Code::BadArgument),
        (r#"{"id":1,"command":["seek","1:75"]}"#, Code::BadArgument),
        (r#"{"id":1,"command":["speed",9]}"#, Code::BadArgument),
        (r#"{"id":1,"command":["sleep",0]}"#, Code::BadArgument),
        (
            r#"{"id":1,"command":["play",null,"c1"]}"#,
            Code::BadArgument,
        ),
        (
            r#"{"version":2,"command":["status"]}"#,
            Code::UnsupportedVersion,
        ),
    ] {
        assert_eq!(code(line), want, "{line}");
    }
    let long = format!(r#"{{"command":["bookmark","{}"]}}"#, "a".repeat(MAX_LINE));
    assert_eq!(code(&long), Code::TooLong);
    // The id is echoed whenever it was read.
    let (id, _) = req(r#"{"id":"x","command":["dance"]}"#).unwrap_err();
    assert_eq!(id, json!("x"));
}

#[test]
fn every_code_reads_back_from_its_name() {
    let server = crate::domain::StopReason::ALL.map(Code::Server);
    for c in Code::ALL_FIXED.into_iter().chain(server) {
        assert_eq!(Code::parse(c.as_str()), Some(c));
    }
}

#[test]
fn replies_and_events_read_back() {
    let r = Refusal::new(Code::NothingPlaying, "no book");
    match incoming(&error(&json!(7), &r)) {
        Some(Incoming::Reply { id, answer }) => {
            assert_eq!(id, json!(7));
            assert_eq!(answer, Err(r));
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        incoming(&result(&json!("a"), json!({"x": 1}))),
        Some(Incoming::Reply { answer: Ok(_), .. })
    ));
    assert!(matches!(
        incoming(r#"{"event":"state","state":"paused"}"#),
        Some(Incoming::Event(_))
    ));
}

fn word() -> impl Strategy<Value = String> {
    "[a-zA-Z0-9_-]{1,12}"
}

fn an_ask() -> impl Strategy<Value = Ask> {
    let secs = 0.0f64..1e6;
    prop_oneof![
        Just(Ask::Status),
        Just(Ask::Pause),
        Just(Ask::Toggle),
        Just(Ask::Next),
        Just(Ask::Prev),
        Just(Ask::Quit),
        Just(Ask::Play(None)),
        Just(Ask::Watch(Watch::Events)),
        Just(Ask::Watch(Watch::Session)),
        (
            word(),
            proptest::option::of(word()),
            proptest::option::of(secs.clone())
        )
            .prop_map(|(b, c, at)| Ask::Play(Some(Open {
                book: BookId::new(b),
                chapter: c.map(ChapterId::new),
                at
            }))),
        secs.clone().prop_map(|s| Ask::Seek(Seek::To(s))),
        (-1e6f64..1e6).prop_map(|s| Ask::Seek(Seek::By(s))),
        (0.5f32..=3.0).prop_map(|s| Ask::Speed(Speed::To(s))),
        (-2.5f32..=2.5).prop_map(|s| Ask::Speed(Speed::By(s))),
        (1u32..=1440).prop_map(|m| Ask::Sleep(SleepChoice::Minutes(m))),
        (1u32..=99).prop_map(|n| Ask::Sleep(SleepChoice::Chapters(n))),
        Just(Ask::Sleep(SleepChoice::Off)),
        proptest::option::of(".{0,40}").prop_map(Ask::Bookmark),
        word().prop_map(|b| Ask::Player(Box::new(PlayerAsk::History(BookId::new(b))))),
        Just(Ask::Player(Box::new(PlayerAsk::Send(Command::Toggle)))),
    ]
}

proptest! {
    #[test]
    fn no_bytes_make_the_decoder_panic(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
        let _ = decode(&bytes);
    }

    #[test]
    fn no_json_request_makes_it_panic(
        id in prop_oneof![Just(json!(null)), any::<i64>().prop_map(|n| json!(n)), ".{0,8}".prop_map(|s| json!(s))],
        name in prop_oneof![word(), Just("seek".to_owned()), Just("play".to_owned()), Just("sleep".to_owned()), Just("speed".to_owned())],
        args in proptest::collection::vec(prop_oneof![
            Just(json!(null)), any::<f64>().prop_map(|x| json!(x)), ".{0,12}".prop_map(|s| json!(s)),
            any::<bool>().prop_map(|b| json!(b)), Just(json!({"send": "toggle"})),
        ], 0..4),
    ) {
        let mut command = vec![json!(name)];
        command.extend(args);
        let line = json!({"id": id, "command": command}).to_string();
        match decode(line.as_bytes()) {
            Ok(r) => prop_assert_eq!(r.id, id),
            Err((got, refusal)) => {
                prop_assert_eq!(got, id);
                prop_assert!(!refusal.message.is_empty());
            }
        }
    }

    #[test]
    fn what_a_client_encodes_the_session_decodes_the_same(id in any::<u32>(), ask in an_ask()) {
        let line = encode(u64::from(id), &ask);
        prop_assert!(line.ends_with('\n') && !line[..line.len() - 1].contains('\n'));
        let got = decode(line.trim_end().as_bytes());
        prop_assert_eq!(got, Ok(Request { id: json!(id), ask }));
    }

    #[test]
    fn a_place_in_clock_form_is_its_seconds(h in 0u32..100, m in 0u32..60, s in 0u32..60) {
        let line = format!(r#"{{"command":["seek","{h}:{m:02}:{s:02}"]}}"#);
        let want = f64::from(h * 3600 + m * 60 + s);
        prop_assert_eq!(req(&line).unwrap().ask, Ask::Seek(Seek::To(want)));
    }
}
