# SPDX-License-Identifier: Apache-2.0
# The replay page writer (include/grit/replay.h, docs/viewer.md): library grit_replay, separate from libgrit
# because it carries three.js. three.js (third_party/three) and the viewer script are embedded at build time
# as byte arrays by cmake/embed_file.cmake: nothing is downloaded when building.
set(GRIT_REPLAY_GEN ${CMAKE_CURRENT_BINARY_DIR}/replay_gen)
set(GRIT_REPLAY_EMBEDS
  "${CMAKE_CURRENT_SOURCE_DIR}/third_party/three/three.min.js|grit_replay_three_js"
  "${CMAKE_CURRENT_SOURCE_DIR}/src/replay/replay_viewer.js|grit_replay_viewer_js")
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

add_library(grit_replay_objects OBJECT src/replay/replay.c src/replay/replay_svg.c src/base/message.c src/base/outfile.c src/base/markup.c
            ${GRIT_REPLAY_GENERATED})
grit_visibility_hidden(grit_replay_objects)
target_include_directories(grit_replay_objects PRIVATE ${GRIT_BASE_INCLUDE} ${CMAKE_CURRENT_SOURCE_DIR}/src/replay) # not the engine's: public API only
target_link_libraries(grit_replay_objects PRIVATE grit_static) # its include directories only
# Warnings as errors for grit's own files; the generated arrays are plain data.
set_source_files_properties(src/replay/replay.c src/replay/replay_svg.c src/base/message.c src/base/outfile.c src/base/markup.c PROPERTIES COMPILE_OPTIONS "${GRIT_WARNINGS}")

add_library(grit_replay ${GRIT_INTERNAL_LIBRARY_TYPE} $<TARGET_OBJECTS:grit_replay_objects>)
grit_internal_output_name(grit_replay grit_replay)
target_link_libraries(grit_replay PUBLIC grit_static)
set_target_properties(grit_replay PROPERTIES EXPORT_NAME replay_static)
add_library(grit_replay_shared SHARED $<TARGET_OBJECTS:grit_replay_objects>)
target_link_libraries(grit_replay_shared PUBLIC grit PRIVATE m)
set_target_properties(grit_replay_shared PROPERTIES OUTPUT_NAME grit_replay EXPORT_NAME replay
  VERSION ${PROJECT_VERSION} SOVERSION ${GRIT_SOVERSION} INSTALL_RPATH "$ORIGIN")
add_library(grit::replay ALIAS grit_replay_shared)
