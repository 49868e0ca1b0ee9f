#!/bin/sh
# tests/doc_links.sh - the documentation's relative links lead somewhere.
#   1. every relative link in README.md, CHANGELOG.md and doc/*.md names a file or folder of
#      the repository;
#   2. every #anchor into a Markdown page names one of its headings, slugged as GitHub does:
#      lower case, inline code and link markup dropped, punctuation other than - and _ dropped,
#      each space a hyphen, and -1, -2, ... appended to repeats. Bytes above ASCII are kept
#      (right for letters, not for symbols such as the multiplication sign: keep headings that
#      are linked to in ASCII);
#   3. a probe page with known good and bad links gives exactly the expected failures, so the
#      check can fail.
# Links inside code (fenced blocks, `spans`) and to other sites (http:, https:, mailto:) are not
# checked, nor anchors into files that are not Markdown. Run from anywhere:
# sh tests/doc_links.sh (part of `make test`). Ends with "N passed, M failed"
# (tests/run_all.sh counts it); exits non-zero on any failure.
set -u
cd "$(dirname "$0")/.." || exit 1
LC_ALL=C
export LC_ALL

pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { echo "  FAIL: $*"; fail=$((fail + 1)); }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/dq_links.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' HUP INT TERM

# links FILE...: "file<TAB>line<TAB>target" for each link outside code
links() {
    awk 'FNR == 1 { fence = 0 }
         /^[ \t]*(```|~~~)/ { fence = !fence; next }
         fence { next }
         {
             line = $0
             gsub(/`[^`]*`/, "", line)
             while (match(line, /\]\([^) \t]+\)/)) {
                 print FILENAME "\t" FNR "\t" substr(line, RSTART + 2, RLENGTH - 3)
                 line = substr(line, RSTART + RLENGTH)
             }
         }' "$@"
}

# slugs FILE: the anchor of each heading of FILE, one a line
slugs() {
    awk 'FNR == 1 { fence = 0 }
         /^[ \t]*(```|~~~)/ { fence = !fence; next }
         fence { next }
         /^#+[ \t]/ {
             h = $0
             sub(/^#+[ \t]+/, "", h)
             sub(/[ \t]+#+[ \t]*$/, "", h)
             sub(/[ \t]+$/, "", h)
             while (match(h, /\[[^]]*\]\([^)]*\)/)) { # a link: its text
                 t = substr(h, RSTART, RLENGTH)
                 sub(/^\[/, "", t)
                 sub(/\]\(.*$/, "", t)
                 h = substr(h, 1, RSTART - 1) t substr(h, RSTART + RLENGTH)
             }
             h = tolower(h)
             s = ""
             for (i = 1; i <= length(h); i++) {
                 c = substr(h, i, 1)
                 if (c == " ") s = s "-"
                 else if (c ~ /[a-z0-9_-]/ || c > "~") s = s c
             }
             n = seen[s]++
             print (n ? s "-" n : s)
         }' "$1"
}

# check_all FILE...: checks every link of the files (paths relative to the current directory);
# prints "FAIL" lines and, last, "<passed> <failed>"
check_all() {
    p=0
    f=0
    links "$@" > "$tmp/links"
    while IFS="$(printf '\t')" read -r file line target; do
        case $target in
        [a-zA-Z]*:*) continue ;; # http:, https:, mailto: ...
        esac
        path=${target%%#*}
        anchor=
        case $target in *'#'*) anchor=${target#*#} ;; esac
        if [ -z "$path" ]; then
            dest=$file
        else
            dest=$(realpath -m --relative-to=. "$(dirname "$file")/$path")
        fi
        if [ ! -e "$dest" ]; then
            echo "  FAIL: $file:$line: $target: no such file $dest"
            f=$((f + 1))
            continue
        fi
        case $anchor in
        '') p=$((p + 1)) ;;
        *)
            case $dest in
            *.md)
                if slugs "$dest" | grep -qxF -- "$anchor"; then
                    p=$((p + 1))
                else
                    echo "  FAIL: $file:$line: $target: $dest has no heading #$anchor"
                    f=$((f + 1))
                fi
                ;;
            *) p=$((p + 1)) ;;
            esac
            ;;
        esac
    done < "$tmp/links"
    echo "$p $f"
}

# 3. the probe: two headings that slug alike, markup in a heading, a link in code, and five
#    links that must fail (a missing file, a missing anchor, the text of a link's URL as an
#    anchor, a repeat's suffix past the last repeat, an anchor that kept its punctuation)
mkdir "$tmp/probe" "$tmp/probe/sub"
cat > "$tmp/probe/sub/page.md" << 'EOF'
# Page
## 2.5 Size, and `dq_x`'s bound
## Same
## Same
## See [the other](../other.md) page
```
[not checked](nowhere.md)
```
Good: [a](#page) [b](#25-size-and-dq_xs-bound) [c](#same) [d](#same-1) [e](#see-the-other-page)
[f](../other.md) [g](.) [h](https://example.org/x.md#y) `[i](nowhere.md)`
Bad: [j](missing.md) [k](#nothing) [l](#see-the-other-otheremd-page) [m](#same-2) [n](#2.5-size)
EOF
printf '# Other\n' > "$tmp/probe/other.md"
probe=$(cd "$tmp/probe" && check_all sub/page.md)
if [ "$(printf '%s\n' "$probe" | tail -n 1)" = "8 5" ] &&
    [ "$(printf '%s\n' "$probe" | grep -c '^  FAIL: ')" = 5 ]; then
    ok
else
    bad "the probe page did not give 8 good and 5 failing links:"
    printf '%s\n' "$probe" | sed 's/^/    /'
fi

# 1-2. the repository's pages
set -- README.md CHANGELOG.md doc/*.md
for f in README.md CHANGELOG.md; do
    [ -f "$f" ] || bad "$f is missing"
done
out=$(check_all "$@")
printf '%s\n' "$out" | sed '$d'
last=$(printf '%s\n' "$out" | tail -n 1)
pass=$((pass + ${last% *}))
fail=$((fail + ${last#* }))

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
