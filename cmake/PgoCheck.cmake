# After the training run (cmake/Pgo.cmake): every engine source has its
# count file, under the name the optimised build looks for. GCC only warns
# when one is missing, so without this a changed naming would quietly ship
# an engine built without counts.
#   cmake -DFILES=a.gcda;b.gcda -P cmake/PgoCheck.cmake
foreach(file IN LISTS FILES)
  if(NOT EXISTS "${file}")
    message(FATAL_ERROR "profile-guided build: the training left no counts in ${file}; "
                        "configure with -DIMPSIM_PGO=OFF to build without them")
  endif()
endforeach()
