#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The README's first program, exactly as printed: the first ```c block after "## A first program" is
# extracted from README.md, compiled with warnings as errors against the build tree's libgrit.so, and run;
# it must exit 0 and print what the README says it prints. usage: run.sh SOURCE_DIR BUILD_DIR C_COMPILER
set -eu
src=$1 build=$2 cc=$3
tmp=$(mktemp -d "${TMPDIR:-/tmp}/grit_readme.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
awk '/^## A first program/ { section = 1 } section && /^```c$/ { code = 1; next }
     code && /^```$/ { exit } code { print }' "$src/README.md" > "$tmp/first.c"
[ -s "$tmp/first.c" ] || { echo "README.md: no \`\`\`c block after '## A first program'"; exit 1; }
grep -q 'int main' "$tmp/first.c" || { echo "README.md: the first program has no main()"; exit 1; }
lib=$(dirname "$(find "$build" -maxdepth 1 -name 'libgrit.so' | head -n 1)")
"$cc" -std=c11 -Wall -Wextra -Wpedantic -Werror -I"$src/include" -I"$build/include" "$tmp/first.c" \
    -L"$lib" -lgrit -Wl,-rpath,"$lib" -o "$tmp/first"
out=$("$tmp/first")
echo "$out"
want=$(sed -n 's/^It prints `\([^`]*\)`.*/\1/p' "$src/README.md")
[ "$out" = "$want" ] || { echo "the program printed '$out'; README.md says '$want'"; exit 1; }
