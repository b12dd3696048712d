# SPDX-License-Identifier: Apache-2.0
# The replay page writer (include/grit/replay.h, docs/viewer.md): library grit_replay, separate from libgrit
# because it carries three.js. three.js (third_party/three) and the viewer script are embedded at build time
# as byte arrays by cmake/embed_file.cmake: nothing is downloaded when building.
set(GRIT_REPLAY_GEN ${CMAKE_CURRENT_BINARY_DIR}/replay_gen)
set(GRIT_REPLAY_EMBEDS
  "${CMAKE_CURRENT_SOURCE_DIR}/third_party/three/three.min.js|grit_replay_three_js"
  "${CMAKE_CURRENT_SOURCE_DIR}/src/replay_viewer.js|grit_replay_viewer_js")
set(GRIT_REPLAY_GENERATED)
foreach(e ${GRIT_REPLAY_EMBEDS})
  string(REPLACE "|" ";" e "${e}")
  list(GET e 0 input)
  list(GET e 1 symbol)
  set(output ${GRIT_REPLAY_GEN}/${symbol}.c)
  add_custom_command(OUTPUT ${output}
    COMMAND ${CMAKE_COMMAND} -DINPUT=${input} -DOUTPUT=${output} -DSYMBOL=${symbol}
            -P ${CMAKE_CURRENT_SOURCE_DIR}/cmake/embed_file.cmake
    DEPENDS ${input} ${CMAKE_CURRENT_SOURCE_DIR}/cmake/embed_file.cmake
    COMMENT "Embedding ${symbol}" VERBATIM)
  list(APPEND GRIT_REPLAY_GENERATED ${output})
endforeach()
file(MAKE_DIRECTORY ${GRIT_REPLAY_GEN})

add_library(grit_replay STATIC src/replay.c src/replay_svg.c ${GRIT_REPLAY_GENERATED})
target_include_directories(grit_replay PUBLIC
  $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/include>
  $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>
  PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/src)
target_link_libraries(grit_replay PUBLIC grit_static)
# Warnings as errors for grit's own files; the generated arrays are plain data.
set_source_files_properties(src/replay.c src/replay_svg.c PROPERTIES COMPILE_OPTIONS "${GRIT_WARNINGS}")
install(TARGETS grit_replay ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
