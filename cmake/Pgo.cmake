# Profile-guided optimisation of the engine (IMPSIM_PGO, on by default in a
# Release build with GCC, never in the sanitizer build).
#
# The step engine is a deep recursion of small functions (_find_spec ->
# TorchProxyMetaFinder.find_spec -> _find_spec_for_specific_module ->
# importlib.util.find_spec -> _find_spec ...) whose costs are calls, guard
# bookkeeping and branches rather than work; GCC's inlining and block layout
# guess badly there without counts. With them the engine of nested_guards
# k = 10 runs 0.69x the instructions (docs/performance.md).
#
# Two stages inside one build, so a clean clone needs nothing but the build:
#   1. impsim_engine_train: the engine's sources again, compiled to count
#      branches, linked into bench/pgo_train.cc, which runs every variant of
#      every shipped scenario at each sweep point, on both engines and
#      traced past a cut (TalliedRun). The counts land in pgo/.
#   2. impsim_engine itself, compiled with those counts.
# GCC names a count file, and keys the counts of a function local to its
# file, after the object's auxiliary name, which follows the object's path
# unless -dumpdir/-dumpbase set it. Both stages set it to the same name per
# source (pgo/sim-engine-bootstrap.cc), so their objects meet at one count
# file (pgo/sim-engine-bootstrap.cc.gcda) and every function, the file's own
# helpers included, finds its counts.
# cmake/PgoCheck.cmake checks the counts are there under those names.
# -fprofile-partial-training keeps what the training never ran (traces,
# error paths) optimised as without a profile, instead of for size.
#
# The training is deterministic (the engine is), so the same sources give
# the same binary: a fresh clone's build/impsim and an incremental build's
# in another folder were byte-identical. An engine source changed in an
# existing build retrains and recompiles what changed; files it did not
# touch keep the layout of the previous counts, which is only ever a
# question of speed.
option(IMPSIM_PGO "Optimise the engine with a profile of the shipped scenarios (Release, GCC)" ON)

if(IMPSIM_PGO AND NOT IMPSIM_SANITIZE AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_BUILD_TYPE STREQUAL "Release")
  set(pgo_dir ${CMAKE_BINARY_DIR}/pgo)
  get_target_property(engine_sources impsim_engine SOURCES)

  set(pgo_names "")
  foreach(source IN LISTS engine_sources)
    string(REPLACE "/" "-" base "${source}")
    set_property(SOURCE ${source} APPEND PROPERTY COMPILE_OPTIONS -dumpdir ${pgo_dir}/ -dumpbase ${base})
    list(APPEND pgo_names ${pgo_dir}/${base}.gcda)
  endforeach()

  add_library(impsim_engine_train OBJECT ${engine_sources})
  target_include_directories(impsim_engine_train PRIVATE ${CMAKE_BINARY_DIR}/layers/engine)
  target_link_libraries(impsim_engine_train PRIVATE impsim_model)
  target_compile_options(impsim_engine_train PRIVATE -fprofile-generate -fprofile-update=single)

  # Below the engine's own library: the trainer links the instrumented
  # objects and the layers under the engine, nothing that links the engine.
  add_executable(impsim_pgo_train bench/pgo_train.cc $<TARGET_OBJECTS:impsim_engine_train>)
  target_link_libraries(impsim_pgo_train PRIVATE impsim_model impsim_reader)
  target_include_directories(impsim_pgo_train PRIVATE ${CMAKE_BINARY_DIR}/layers/engine)
  target_link_options(impsim_pgo_train PRIVATE -fprofile-generate)

  file(GLOB_RECURSE pgo_scenarios CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/scenarios/*.json)
  list(SORT pgo_scenarios)
  add_custom_command(
    OUTPUT ${pgo_dir}/trained
    COMMAND ${CMAKE_COMMAND} -E rm -f ${pgo_names}
    COMMAND impsim_pgo_train ${pgo_scenarios}
    COMMAND ${CMAKE_COMMAND} "-DFILES=${pgo_names}" -P ${CMAKE_SOURCE_DIR}/cmake/PgoCheck.cmake
    COMMAND ${CMAKE_COMMAND} -E touch ${pgo_dir}/trained
    DEPENDS impsim_pgo_train ${pgo_scenarios} ${CMAKE_SOURCE_DIR}/cmake/PgoCheck.cmake
    COMMENT "Training the engine's profile on the shipped scenarios"
    VERBATIM)
  add_custom_target(impsim_pgo_profile DEPENDS ${pgo_dir}/trained)
  add_dependencies(impsim_engine impsim_pgo_profile)
  target_compile_options(impsim_engine PRIVATE -fprofile-use -fprofile-partial-training -Wmissing-profile)
endif()
