# Stages Python packages into the build tree and byte-compiles them there:
#   cmake -DPYTHON=/usr/bin/python3.X -DDEST=<build>/python -DPACKAGES="<dir>;<dir>" -P stage_python.cmake
# Each package directory is copied whole (its subpackages too, only *.py) to
# DEST/<its name>, replacing what an earlier build staged there, so a module
# deleted from the source tree does not linger in the build.  Nothing is
# written next to the sources.
foreach(var PYTHON DEST PACKAGES)
  if(NOT ${var})
    message(FATAL_ERROR "stage_python.cmake: -D${var}=... is required")
  endif()
endforeach()

set(staged)
foreach(package IN LISTS PACKAGES)
  get_filename_component(name "${package}" NAME)
  file(REMOVE_RECURSE "${DEST}/${name}")
  file(COPY "${package}" DESTINATION "${DEST}"
       FILES_MATCHING PATTERN "*.py"
       PATTERN "__pycache__" EXCLUDE)
  list(APPEND staged "${DEST}/${name}")
endforeach()

execute_process(COMMAND "${PYTHON}" -m compileall -q ${staged} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "stage_python.cmake: ${PYTHON} -m compileall failed on ${staged}")
endif()
# The record classes' __init__s, compiled next to the modules' bytecode
# (pyhang/model/record_cache.py).
execute_process(COMMAND "${CMAKE_COMMAND}" -E env "PYTHONPATH=${DEST}" "${PYTHON}" -S -m pyhang.model.record_cache
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "stage_python.cmake: ${PYTHON} -m pyhang.model.record_cache failed in ${DEST}")
endif()
