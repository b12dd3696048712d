#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Puts the SPDX licence line at the top of every project source file (after a #! line), or with
# --check lists the files without it and fails. third_party/ is never touched (its own licences).
# Usage: tools/spdx.sh [--check]   (from anywhere inside the repository's git checkout)
set -eu
cd "$(git rev-parse --show-toplevel)"
check=0
[ "${1:-}" = "--check" ] && check=1
# one awk over every file (a head | grep per file took most of a minute on a loaded machine)
missing=$(git ls-files -z -- '*.c' '*.h' '*.js' '*.py' '*.sh' '*.cmake' '*.in' 'CMakeLists.txt' '*/CMakeLists.txt' \
    '.ci/run' ':!third_party' | xargs -0 awk '
  FNR == 1 { if (f != "" && !ok) print f; f = FILENAME; ok = 0 }
  FNR <= 2 && /SPDX-License-Identifier:/ { ok = 1 }
  END { if (f != "" && !ok) print f }' | sort -u)
[ -z "$missing" ] && exit 0
if [ "$check" = 1 ]; then
  echo "$missing" | sed 's/^/no SPDX line (tools\/spdx.sh adds it): /'
  exit 1
fi
echo "$missing" | while IFS= read -r f; do
  case "$f" in
    *.c|*.h|*.js) line='/* SPDX-License-Identifier: Apache-2.0 */' ;;
    *) line='# SPDX-License-Identifier: Apache-2.0' ;;
  esac
  if head -n 1 "$f" | grep -q '^#!'; then
    { head -n 1 "$f"; echo "$line"; tail -n +2 "$f"; } > "$f.spdx"
  else
    { echo "$line"; cat "$f"; } > "$f.spdx"
  fi
  chmod --reference="$f" "$f.spdx"
  mv "$f.spdx" "$f"
  echo "added: $f"
done
