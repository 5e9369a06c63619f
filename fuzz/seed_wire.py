#!/usr/bin/env python3
"""Seeds the wire corpora from the JSON shapes the tests already know:
every `json!(...)` literal and raw-string JSON in src/api/wire/tests.rs,
tests/dialects/ and tests/client/families.rs that is plain JSON (no Rust
expressions). Writes fuzz/seeds/wire/<sha1>.json; run from the repo root."""
import hashlib, json, pathlib, re, sys

root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".")
files = [root / "src/api/wire/tests.rs", root / "tests/client/families.rs"]
files += sorted((root / "tests/dialects").glob("*.rs"))
out = root / "fuzz/seeds/wire"
out.mkdir(parents=True, exist_ok=True)

def balanced(text, start):
    depth, i, in_str = 0, start, False
    while i < len(text):
        c = text[i]
        if in_str:
            if c == "\\":
                i += 1
            elif c == '"':
                in_str = False
        elif c == '"':
            in_str = True
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                return text[start + 1 : i]
        i += 1
    return None

seeds = set()
for f in files:
    text = f.read_text()
    for m in re.finditer(r"json!\s*\(", text):
        body = balanced(text, m.end() - 1)
        if body is None:
            continue
        body = re.sub(r",\s*([}\]])", r"\1", body.strip())  # trailing commas
        try:
            seeds.add(json.dumps(json.loads(body)))
        except ValueError:
            pass
    for m in re.finditer(r'r#"(.*?)"#', text, re.S):
        try:
            seeds.add(json.dumps(json.loads(m.group(1))))
        except ValueError:
            pass
for s in sorted(seeds):
    (out / (hashlib.sha1(s.encode()).hexdigest()[:16] + ".json")).write_text(s)
print(f"{len(seeds)} seeds in {out}")
