#!/usr/bin/env bash
# Regenerates the demo library in assets/demo/ from the texts in assets/texts/.
#
# Not run by the build: its output is committed. Run it by hand after editing a
# text or a setting below, then commit the result:
#
#     assets/make-demo.sh            # rebuilds assets/demo from scratch
#
# Needs (Debian/Ubuntu): espeak-ng ffmpeg sox  (apt-get install -y espeak-ng ffmpeg sox)
#
# Text format (assets/texts/*.txt): each chapter starts with a line "## <chapter title>";
# the lines after it, up to the next "## ", are the chapter's text. The title is spoken
# first, then the text.
#
# Deterministic: espeak-ng output is fixed for a given version, and every ffmpeg run uses
# bitexact flags (no encoder version string, no creation time, fixed Ogg serial numbers),
# so the same tool versions give byte-identical files.
# Made with: espeak-ng 1.51, ffmpeg 5.1 (Debian 12).
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
texts="$here/texts"
out="$here/demo"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

for tool in espeak-ng ffmpeg ffprobe sox soxi; do
    command -v "$tool" >/dev/null || { echo "make-demo.sh: '$tool' is missing (apt-get install -y espeak-ng ffmpeg sox)" >&2; exit 1; }
done

RATE=22050          # espeak-ng's native rate; mono everywhere
WPM=160             # speaking speed, words per minute
FF=(ffmpeg -hide_banner -loglevel error -nostdin -y)
# Output options that keep files reproducible (no "Lavf…" encoder tag, fixed Ogg serials).
EXACT=(-fflags +bitexact -flags:a +bitexact)

# split TEXT_FILE DIR: writes DIR/NN.title and DIR/NN.txt (title + body) per chapter,
# NN = 01, 02, ... in the order of the text file.
split() {
    mkdir -p "$2"
    awk -v dir="$2" '
        /^## / { n++; f = sprintf("%s/%02d", dir, n); t = substr($0, 4)
                 printf "%s", t > (f ".title"); close(f ".title")
                 printf "%s.\n\n", t > (f ".txt"); next }
        n > 0  { print >> (f ".txt") }
    ' "$1"
}

# speak VOICE DIR: renders every DIR/NN.txt to DIR/NN.wav (mono, $RATE Hz, 16-bit)
# with half a second of silence at the end.
speak() {
    local txt
    for txt in "$2"/*.txt; do
        espeak-ng -v "$1" -s "$WPM" -f "$txt" -w "${txt%.txt}.raw.wav"
        sox "${txt%.txt}.raw.wav" -r "$RATE" -c 1 "${txt%.txt}.wav" pad 0 0.5
    done
}

# cover FILE COLOUR: a small solid-colour 200x200 JPEG.
cover() {
    "${FF[@]}" -f lavfi -i "color=c=$2:s=200x200:d=1" -frames:v 1 -q:v 6 -fflags +bitexact -flags:v +bitexact "$1"
}

# book_toml DIR TITLE AUTHOR DESCRIPTION CATEGORY
book_toml() {
    cat >"$1/book.toml" <<EOF
title = "$2"
author = "$3"
narrator = "espeak-ng"
description = "$4"
categories = ["$5"]
EOF
}

# ffmetadata DIR TITLE ARTIST COMMENT > FILE: global tags plus one [CHAPTER] per
# DIR/NN.wav, boundaries in samples at $RATE Hz (exact, no rounding drift).
ffmetadata() {
    local start=0 len wav
    printf ';FFMETADATA1\ntitle=%s\nalbum=%s\nartist=%s\nalbum_artist=%s\ncomment=%s\ngenre=Audiobook\n' \
        "$2" "$2" "$3" "$3" "$4"
    for wav in "$1"/[0-9][0-9].wav; do
        len="$(soxi -s "$wav")"
        printf '\n[CHAPTER]\nTIMEBASE=1/%s\nSTART=%s\nEND=%s\ntitle=%s\n' \
            "$RATE" "$start" "$((start + len))" "$(cat "${wav%.wav}.title")"
        start=$((start + len))
    done
}

rm -rf "$out"
mkdir -p "$out"

# --- 1. Classics: single .m4b (AAC-LC) with embedded chapters -----------------------
# ffmpeg's ipod muxer writes both a Nero 'chpl' list and a QuickTime chapter text track.
book="$out/Classics/The Tell-Tale Heart"
title="The Tell-Tale Heart"
author="Edgar Allan Poe"
mkdir -p "$book"
split "$texts/tell-tale-heart.txt" "$work/tth"
speak en-us "$work/tth"
sox "$work"/tth/[0-9][0-9].wav "$work/tth/all.wav"
ffmetadata "$work/tth" "$title" "$author" "Read by espeak-ng" >"$work/tth/meta.txt"
"${FF[@]}" -i "$work/tth/all.wav" -i "$work/tth/meta.txt" -map 0:a -map_metadata 1 -map_chapters 1 \
    -c:a aac -b:a 24k -ac 1 -ar "$RATE" -f ipod -brand "M4B " "${EXACT[@]}" "$book/$title.m4b"
book_toml "$book" "$title" "$author" \
    "The opening of Poe's tale (1843): a narrator insists on his sanity while describing his nightly watch over an old man's vulture eye." \
    Classics
cover "$book/cover.jpg" 0x5a1e1e

# --- 2. Fables: multi-file mp3, unpadded numbers (natural order != lexical order) ---
book="$out/Fables/Aesop's Fables"
album="Aesop's Fables"
mkdir -p "$book"
split "$texts/aesop.txt" "$work/aesop"
speak en-gb "$work/aesop"
total="$(ls "$work"/aesop/[0-9][0-9].wav | wc -l)"
for wav in "$work"/aesop/[0-9][0-9].wav; do
    n="$((10#$(basename "$wav" .wav)))"
    t="$(cat "${wav%.wav}.title")"
    "${FF[@]}" -i "$wav" -map_metadata -1 -c:a libmp3lame -b:a 24k -ac 1 -ar "$RATE" \
        -metadata title="$t" -metadata artist="Aesop" -metadata album="$album" \
        -metadata album_artist="Aesop" -metadata track="$n/$total" -metadata genre="Audiobook" \
        -metadata comment="Translated by George Fyler Townsend (1867); read by espeak-ng" \
        "${EXACT[@]}" "$book/$n - $t.mp3"
done
book_toml "$book" "$album" "Aesop" \
    "Ten fables in George Fyler Townsend's translation (1867): the fox and the grapes, the hare and the tortoise, the lion and the mouse, and more." \
    Fables
printf 'series = "Aesop'"'"'s Fables"\nsequence = 1\n' >>"$book/book.toml"
cover "$book/cover.jpg" 0x2e5a1e

# --- 3. Fables: German, one mp3 with ID3v2 CHAP chapters and embedded cover art -----
book="$out/Fables/Die Bremer Stadtmusikanten – Märchen"
title="Die Bremer Stadtmusikanten – Märchen"
author="Brüder Grimm"
mkdir -p "$book"
split "$texts/bremer-stadtmusikanten.txt" "$work/bremen"
speak de "$work/bremen"
sox "$work"/bremen/[0-9][0-9].wav "$work/bremen/all.wav"
ffmetadata "$work/bremen" "$title" "$author" "Gelesen von espeak-ng" >"$work/bremen/meta.txt"
# Embedded art differs in colour from cover.jpg, so a test can tell which one won.
cover "$work/bremen/embedded.jpg" 0x1e3a5a
"${FF[@]}" -i "$work/bremen/all.wav" -i "$work/bremen/meta.txt" -i "$work/bremen/embedded.jpg" \
    -map 0:a -map 2:v -map_metadata 1 -map_chapters 1 \
    -c:a libmp3lame -b:a 24k -ac 1 -ar "$RATE" -c:v copy -disposition:v attached_pic \
    -metadata:s:v title="Album cover" -metadata:s:v comment="Cover (front)" \
    -id3v2_version 4 "${EXACT[@]}" "$book/Die Bremer Stadtmusikanten.mp3"
book_toml "$book" "$title" "$author" \
    "Der Anfang des Märchens (KHM 27, 1819): Esel, Hund, Katze und Hahn machen sich auf den Weg nach Bremen." \
    Fables
cover "$book/cover.jpg" 0x8a6a1e

# --- 4. Poetry: multi-file Ogg Vorbis -------------------------------------------------
book="$out/Poetry/Poems of Edgar Allan Poe"
album="Poems of Edgar Allan Poe"
mkdir -p "$book"
split "$texts/poe-poems.txt" "$work/poe"
speak en-us "$work/poe"
total="$(ls "$work"/poe/[0-9][0-9].wav | wc -l)"
for wav in "$work"/poe/[0-9][0-9].wav; do
    nn="$(basename "$wav" .wav)"
    t="$(cat "${wav%.wav}.title")"
    "${FF[@]}" -i "$wav" -map_metadata -1 -c:a libvorbis -q:a 0 -ac 1 -ar "$RATE" \
        -metadata title="$t" -metadata artist="Edgar Allan Poe" -metadata album="$album" \
        -metadata track="$((10#$nn))/$total" -metadata genre="Audiobook" \
        "${EXACT[@]}" "$book/$nn - $t.ogg"
done
book_toml "$book" "$album" "Edgar Allan Poe" \
    "Four poems: Eldorado (1849), A Dream Within a Dream (1849), To Helen (1831) and Annabel Lee (1849)." \
    Poetry
cover "$book/cover.jpg" 0x3a1e5a

# --- 5. Poetry: French, multi-file FLAC (16 kHz to keep lossless files small) ---------
book="$out/Poetry/Poèmes choisis – Paul Verlaine"
album="Poèmes choisis"
mkdir -p "$book"
split "$texts/verlaine.txt" "$work/verlaine"
speak fr-fr "$work/verlaine"
total="$(ls "$work"/verlaine/[0-9][0-9].wav | wc -l)"
for wav in "$work"/verlaine/[0-9][0-9].wav; do
    nn="$(basename "$wav" .wav)"
    t="$(cat "${wav%.wav}.title")"
    "${FF[@]}" -i "$wav" -map_metadata -1 -c:a flac -compression_level 12 -ac 1 -ar 16000 \
        -metadata title="$t" -metadata artist="Paul Verlaine" -metadata album="$album" \
        -metadata track="$((10#$nn))/$total" -metadata genre="Audiobook" \
        "${EXACT[@]}" "$book/$nn - $t.flac"
done
book_toml "$book" "Poèmes choisis – Paul Verlaine" "Paul Verlaine" \
    "Trois poèmes : Chanson d'automne (1866), Il pleure dans mon cœur (1874) et Le ciel est, par-dessus le toit (1880)." \
    Poetry
cover "$book/cover.jpg" 0x1e5a52

# --- 6./7. A series: two more Aesop books after "Aesop's Fables" (#1) -------------------
# "The Milk-Woman and Other Fables" (#2) names its series in book.toml; "The Oak and
# the Reeds" (#1.5) only in its tags (ID3 TXXX SERIES and SERIES-PART), so the scanner's tag
# reading is exercised too. Ordered by sequence, #1.5 sits between #1 and #2.
# aesop_mp3 WORKDIR BOOKDIR ALBUM [extra ffmpeg args]: one mp3 per chapter.
aesop_mp3() {
    local wav n t total
    total="$(ls "$1"/[0-9][0-9].wav | wc -l)"
    for wav in "$1"/[0-9][0-9].wav; do
        n="$((10#$(basename "$wav" .wav)))"
        t="$(cat "${wav%.wav}.title")"
        "${FF[@]}" -i "$wav" -map_metadata -1 -c:a libmp3lame -b:a 24k -ac 1 -ar "$RATE" \
            -metadata title="$t" -metadata artist="Aesop" -metadata album="$3" \
            -metadata album_artist="Aesop" -metadata track="$n/$total" -metadata genre="Audiobook" \
            "${@:4}" "${EXACT[@]}" "$2/$n - $t.mp3"
    done
}
book="$out/Fables/The Milk-Woman and Other Fables"
mkdir -p "$book"
split "$texts/aesop-more.txt" "$work/aesop2"
speak en-gb "$work/aesop2"
aesop_mp3 "$work/aesop2" "$book" "The Milk-Woman and Other Fables"
book_toml "$book" "The Milk-Woman and Other Fables" "Aesop" \
    "Two more fables in Townsend's translation: the milk-woman and her pail, the boy and the filberts." \
    Fables
printf 'series = "Aesop'"'"'s Fables"\nsequence = "2"\n' >>"$book/book.toml"
cover "$book/cover.jpg" 0x5a4a1e

book="$out/Fables/The Oak and the Reeds"
mkdir -p "$book"
split "$texts/aesop-interlude.txt" "$work/aesop15"
speak en-gb "$work/aesop15"
aesop_mp3 "$work/aesop15" "$book" "The Oak and the Reeds" \
    -metadata SERIES="Aesop's Fables" -metadata SERIES-PART="1.5" -id3v2_version 4
book_toml "$book" "The Oak and the Reeds" "Aesop" \
    "One fable between the first and second books: the oak and the reeds." \
    Fables
cover "$book/cover.jpg" 0x1e4a5a

du -sh "$out"
