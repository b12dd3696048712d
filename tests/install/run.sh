#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Installs the build into a temporary prefix, then builds tests/install/consumer.c against it twice, with
# pkg-config (grit_ilqr.pc, which requires grit.pc) and with a CMake project (find_package(grit CONFIG),
# grit::grit and grit::ilqr), and runs both programs and the installed `grit --version` without
# LD_LIBRARY_PATH (RUNPATH). usage: run.sh BUILD_DIR SOURCE_DIR CMAKE C_COMPILER
set -eu
build=$1 src=$2 cmake=$3 cc=$4
tmp=$(mktemp -d "${TMPDIR:-/tmp}/grit_install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
unset LD_LIBRARY_PATH
prefix=$tmp/prefix
"$cmake" --install "$build" --prefix "$prefix" > "$tmp/install.log"
libdir=$(dirname "$(find "$prefix" -name 'libgrit.so' | head -n 1)")
want=$(sed -n 's/^#define GRIT_VERSION_STRING "\(.*\)"/\1/p' "$prefix/include/grit/version.h")

# The installed program finds its libraries by its RUNPATH.
out=$("$prefix/bin/grit" --version)
[ "$out" = "grit $want" ] || { echo "installed grit --version: '$out', expected 'grit $want'"; exit 1; }

# pkg-config (the linker's -rpath so that the program runs without LD_LIBRARY_PATH).
PKG_CONFIG_PATH=$libdir/pkgconfig
export PKG_CONFIG_PATH
pkg-config --exists 'grit_ilqr >= 0.1' 'grit_replay' 'grit'
"$cc" -std=c11 -Wall -Werror -o "$tmp/consumer_pc" "$src/tests/install/consumer.c" \
    $(pkg-config --cflags --libs grit_ilqr) -Wl,-rpath,"$libdir"
out=$("$tmp/consumer_pc")
[ "$out" = "grit $want" ] || { echo "pkg-config consumer printed '$out', expected 'grit $want'"; exit 1; }

# CMake package.
"$cmake" -S "$src/tests/install" -B "$tmp/cmake_build" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_C_COMPILER="$cc" \
    > "$tmp/cmake.log" 2>&1 || { cat "$tmp/cmake.log"; exit 1; }
"$cmake" --build "$tmp/cmake_build" > "$tmp/build.log" 2>&1 || { cat "$tmp/build.log"; exit 1; }
out=$("$tmp/cmake_build/consumer")
[ "$out" = "grit $want" ] || { echo "CMake consumer printed '$out', expected 'grit $want'"; exit 1; }
echo "install: prefix, pkg-config and CMake consumers, installed grit: all print 'grit $want'"
