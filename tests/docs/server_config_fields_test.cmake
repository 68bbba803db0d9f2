# docs.server_config_fields: every field the server's config parser accepts is documented in
# docs/server_config.md. The fields are taken from the parser itself — the brace lists of
# refuse_unknown_fields(...) (the top level, tagg) in host_server/server_config.cpp and of
# only_fields(...) (a task declaration and each kind's block) in host_server/tasks/ — so a field
# added to a list without its documentation fails here, naming it. Each must appear in the doc
# as `name` (in backquotes, as in its tables).
#   cmake -DSOURCE_DIR=<fedstat> -P tests/docs/server_config_fields_test.cmake
cmake_minimum_required(VERSION 3.16)  # IN_LIST
if(NOT SOURCE_DIR)
  message(FATAL_ERROR "usage: cmake -DSOURCE_DIR=<fedstat> -P server_config_fields_test.cmake")
endif()
file(READ "${SOURCE_DIR}/docs/server_config.md" doc)
set(sources host_server/server_config.cpp host_server/tasks/task_plan.cpp
            host_server/tasks/model_update_plan.cpp host_server/tasks/heterogeneity_plan.cpp)
set(fields "")
foreach(source IN LISTS sources)
  file(READ "${SOURCE_DIR}/${source}" text)
  # A call's brace list of quoted names: "(refuse_unknown_fields|only_fields)(<args> {"a", "b"}".
  string(REGEX MATCHALL
         "(refuse_unknown_fields|only_fields)\\([^{;]*{[ \n]*\"[a-z0-9_]+\"([ \n]*,[ \n]*\"[a-z0-9_]+\")*[ \n]*}"
         lists "${text}")
  if(NOT lists)
    message(FATAL_ERROR "${source}: no refuse_unknown_fields/only_fields list found: the parser "
                        "changed shape; update this test")
  endif()
  foreach(list IN LISTS lists)
    string(REGEX MATCHALL "\"[a-z0-9_]+\"" names "${list}")
    foreach(name IN LISTS names)
      string(REPLACE "\"" "" name "${name}")
      list(APPEND fields "${name}")
    endforeach()
  endforeach()
endforeach()
list(REMOVE_DUPLICATES fields)
list(LENGTH fields count)
# The lists as of this test's writing hold 75 distinct names; far fewer means the extraction broke.
if(count LESS 60)
  message(FATAL_ERROR "only ${count} config fields found in the parser (${fields}): the "
                      "extraction broke; update this test")
endif()
foreach(known listen fleet_secret status_listen timeout_ms reconnect_grace_seconds buckets tau
              evaluation stage2_id)
  if(NOT known IN_LIST fields)
    message(FATAL_ERROR "the extraction missed '${known}', a field the parser accepts")
  endif()
endforeach()
set(missing "")
foreach(name IN LISTS fields)
  string(FIND "${doc}" "`${name}`" at)
  if(at EQUAL -1)
    list(APPEND missing "${name}")
  endif()
endforeach()
if(missing)
  message(FATAL_ERROR "docs/server_config.md does not document these config fields the parser "
                      "accepts: ${missing} (add each, as `name`, with its type, default, range "
                      "and what it does)")
endif()
message(STATUS "docs/server_config.md documents all ${count} config fields the parser accepts")
