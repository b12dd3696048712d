# SPDX-License-Identifier: Apache-2.0
# Installation: the libraries (shared with SONAME, and static), the headers (with the generated
# grit/version.h), pkg-config files grit.pc, grit_ilqr.pc, grit_replay.pc, and the CMake package
#   find_package(grit CONFIG)  ->  grit::grit, grit::ilqr, grit::replay (shared),
#                                  grit::grit_static, grit::ilqr_static, grit::replay_static
# with a version file (0.x: a newer patch release of the same minor version is compatible). Everything is
# relocatable: the pkg-config files and the CMake package find the prefix from where they are installed.
include(CMakePackageConfigHelpers)
set(GRIT_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/grit)

# Shared libraries must resolve every symbol at link time (an internal function used across libraries
# would otherwise fail only when a program loads them). Not with sanitizers or libFuzzer: clang leaves
# their runtime's symbols to the executable.
if(NOT GRIT_SANITIZE AND NOT GRIT_FUZZ)
  foreach(t grit grit_ilqr_shared grit_replay_shared)
    target_link_options(${t} PRIVATE -Wl,--no-undefined)
  endforeach()
endif()

install(TARGETS grit grit_static grit_ilqr grit_ilqr_shared grit_replay grit_replay_shared
        EXPORT gritTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY include/grit ilqr/include/grit_ilqr DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES ${GRIT_GENERATED_INCLUDE}/grit/version.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/grit)

install(EXPORT gritTargets NAMESPACE grit:: FILE gritTargets.cmake DESTINATION ${GRIT_CMAKE_DIR})
configure_package_config_file(cmake/gritConfig.cmake.in ${CMAKE_CURRENT_BINARY_DIR}/gritConfig.cmake
                              INSTALL_DESTINATION ${GRIT_CMAKE_DIR})
if(PROJECT_VERSION_MAJOR EQUAL 0)
  set(GRIT_COMPATIBILITY SameMinorVersion)
else()
  set(GRIT_COMPATIBILITY SameMajorVersion)
endif()
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/gritConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY ${GRIT_COMPATIBILITY})
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/gritConfig.cmake ${CMAKE_CURRENT_BINARY_DIR}/gritConfigVersion.cmake
        DESTINATION ${GRIT_CMAKE_DIR})

foreach(pc grit grit_ilqr grit_replay)
  configure_file(cmake/${pc}.pc.in ${CMAKE_CURRENT_BINARY_DIR}/${pc}.pc @ONLY)
  install(FILES ${CMAKE_CURRENT_BINARY_DIR}/${pc}.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endforeach()
