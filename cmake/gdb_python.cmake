# Which Python gdb embeds: pyhang's native module is loaded by it, and must be
# built for it.  Asks gdb (`gdb -nx -batch -ex 'python ...'`) for its Python's
# version and prefix; without -DPYHANG_GDB_PYTHON, that version's interpreter
# in that prefix (/usr/bin/python3.11 for Debian 12's gdb) is the one built for.
# Given one of another version, the configure warns: gdb could not load it.

function(pyhang_check_gdb_python)
  find_program(PYHANG_GDB gdb)
  if(NOT PYHANG_GDB)
    if(NOT PYHANG_GDB_PYTHON)
      message(WARNING "pyhang: gdb is not installed, so the Python it embeds is not known: building for the "
                      "first python3 found; give -DPYHANG_GDB_PYTHON=/usr/bin/python3.X (the one gdb embeds)")
    endif()
    return()
  endif()
  execute_process(COMMAND ${PYHANG_GDB} -nx -batch -ex
                          "python import sys; print('pyhang-gdb-python %d.%d %s' % (sys.version_info[0], sys.version_info[1], sys.base_prefix))"
                  OUTPUT_VARIABLE said ERROR_QUIET TIMEOUT 60)
  if(NOT said MATCHES "pyhang-gdb-python ([0-9]+\\.[0-9]+) ([^\n]*)")
    if(NOT PYHANG_GDB_PYTHON)
      message(WARNING "pyhang: ${PYHANG_GDB} did not say which Python it embeds (built without Python?): building "
                      "for the first python3 found; give -DPYHANG_GDB_PYTHON=/usr/bin/python3.X")
    endif()
    return()
  endif()
  set(version ${CMAKE_MATCH_1})
  set(prefix ${CMAKE_MATCH_2})
  if(PYHANG_GDB_PYTHON)
    execute_process(COMMAND ${PYHANG_GDB_PYTHON} -c "import sys; print('%d.%d' % sys.version_info[:2])"
                    OUTPUT_VARIABLE given OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    if(NOT given STREQUAL version)
      message(WARNING "pyhang: ${PYHANG_GDB} embeds Python ${version}, but PYHANG_GDB_PYTHON=${PYHANG_GDB_PYTHON} "
                      "is Python ${given}: gdb will not load a module built for it")
    endif()
    return()
  endif()
  foreach(candidate ${prefix}/bin/python${version} /usr/bin/python${version})
    if(EXISTS ${candidate})
      message(STATUS "pyhang: ${PYHANG_GDB} embeds Python ${version}: building for ${candidate}")
      set(PYHANG_GDB_PYTHON ${candidate} CACHE FILEPATH "Interpreter matching the Python that gdb embeds" FORCE)
      return()
    endif()
  endforeach()
  message(FATAL_ERROR "pyhang: ${PYHANG_GDB} embeds Python ${version}, but ${prefix}/bin/python${version} is "
                      "missing: install python${version}-dev (Debian: apt-get install python${version}-dev), or "
                      "give -DPYHANG_GDB_PYTHON=/path/to/python${version}")
endfunction()
