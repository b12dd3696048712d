# SPDX-License-Identifier: Apache-2.0
# Finds grit's dependencies from Debian's packages and fails with the name of the missing package.
# Sets GRIT_DEP_INCLUDE_DIRS and GRIT_DEP_LIBRARIES.
find_package(PkgConfig)

function(grit_require_header var header apt_pkg)
  find_path(${var} ${header} PATH_SUFFIXES suitesparse)
  if(NOT ${var})
    message(FATAL_ERROR "grit: header ${header} not found; install it with: apt-get install -y ${apt_pkg}")
  endif()
endfunction()

function(grit_require_library var name apt_pkg)
  find_library(${var} NAMES ${name})
  if(NOT ${var})
    message(FATAL_ERROR "grit: library ${name} not found; install it with: apt-get install -y ${apt_pkg}")
  endif()
endfunction()

# SuiteSparse CHOLMOD (Debian ships no pkg-config file for it).
grit_require_header(CHOLMOD_INCLUDE_DIR cholmod.h libsuitesparse-dev)
grit_require_library(CHOLMOD_LIBRARY cholmod libsuitesparse-dev)
grit_require_library(SUITESPARSECONFIG_LIBRARY suitesparseconfig libsuitesparse-dev)

# OpenBLAS + LAPACKE.
grit_require_library(OPENBLAS_LIBRARY openblas libopenblas-dev)
grit_require_header(LAPACKE_INCLUDE_DIR lapacke.h liblapacke-dev)
grit_require_library(LAPACKE_LIBRARY lapacke liblapacke-dev)

# libccd (double precision build on Debian).
grit_require_header(CCD_INCLUDE_DIR ccd/ccd.h libccd-dev)
grit_require_library(CCD_LIBRARY ccd libccd-dev)

# libexpat, for the MJCF model loader (src/io/mjcf_xml.c).
grit_require_header(EXPAT_INCLUDE_DIR expat.h libexpat1-dev)
grit_require_library(EXPAT_LIBRARY expat libexpat1-dev)

# Qhull (reentrant), for the convex hulls of mesh geometries (src/io/mjcf_hull.c).
grit_require_header(QHULL_INCLUDE_DIR libqhull_r/libqhull_r.h libqhull-dev)
grit_require_library(QHULL_LIBRARY qhull_r libqhull-dev)

# libpng, for height fields read from PNG files (src/io/mjcf_hfield_file.c).
pkg_check_modules(PNG libpng)
if(NOT PNG_FOUND)
  message(FATAL_ERROR "grit: libpng not found (pkg-config libpng); install it with: apt-get install -y libpng-dev")
endif()

find_library(MATH_LIBRARY m)

# urdfdom (C++, with console_bridge and tinyxml), for the URDF loader (src/io/urdf_parse.cc).
pkg_check_modules(URDFDOM urdfdom)
if(NOT URDFDOM_FOUND)
  message(FATAL_ERROR "grit: urdfdom not found (pkg-config urdfdom); install it with: apt-get install -y liburdfdom-dev")
endif()

# The engine's dependencies (src/engine) and the file formats' (src/io: expat, Qhull, urdfdom), kept apart
# so that the engine is compiled and linked without the formats' (CMakeLists.txt: grit_engine).
set(GRIT_ENGINE_DEP_INCLUDE_DIRS ${CHOLMOD_INCLUDE_DIR} ${LAPACKE_INCLUDE_DIR} ${CCD_INCLUDE_DIR})
list(REMOVE_DUPLICATES GRIT_ENGINE_DEP_INCLUDE_DIRS)
set(GRIT_IO_DEP_INCLUDE_DIRS ${EXPAT_INCLUDE_DIR} ${QHULL_INCLUDE_DIR} ${URDFDOM_INCLUDE_DIRS} ${PNG_INCLUDE_DIRS})
set(GRIT_ENGINE_DEP_LIBRARIES ${CHOLMOD_LIBRARY} ${SUITESPARSECONFIG_LIBRARY} ${LAPACKE_LIBRARY}
    ${OPENBLAS_LIBRARY} ${CCD_LIBRARY} ${MATH_LIBRARY})
set(GRIT_IO_DEP_LIBRARIES ${EXPAT_LIBRARY} ${QHULL_LIBRARY} ${URDFDOM_LINK_LIBRARIES} ${PNG_LINK_LIBRARIES})
set(GRIT_DEP_INCLUDE_DIRS ${GRIT_ENGINE_DEP_INCLUDE_DIRS} ${GRIT_IO_DEP_INCLUDE_DIRS})
list(REMOVE_DUPLICATES GRIT_DEP_INCLUDE_DIRS)
set(GRIT_DEP_LIBRARIES ${GRIT_ENGINE_DEP_LIBRARIES} ${GRIT_IO_DEP_LIBRARIES} ${MATH_LIBRARY})
# POSIX threads: grit_fit_timed rolls segments out on threads (src/engine/sysid_fit.c).
set(THREADS_PREFER_PTHREAD_FLAG ON)
find_package(Threads REQUIRED)
list(APPEND GRIT_DEP_LIBRARIES Threads::Threads)
list(APPEND GRIT_ENGINE_DEP_LIBRARIES Threads::Threads)

# Criterion, only for the tests.
if(GRIT_BUILD_TESTS)
  grit_require_header(CRITERION_INCLUDE_DIR criterion/criterion.h libcriterion-dev)
  grit_require_library(CRITERION_LIBRARY criterion libcriterion-dev)
endif()

# MuJoCo is a reference peer for comparison tests and benchmarks, never a dependency of the library.
find_package(mujoco QUIET)
if(mujoco_FOUND)
  message(STATUS "grit: MuJoCo ${mujoco_VERSION} found: comparison tests and benchmarks enabled")
else()
  message(STATUS "grit: MuJoCo not found (apt-get install -y libmujoco-dev): comparison tests skipped")
endif()

find_package(Threads REQUIRED)
