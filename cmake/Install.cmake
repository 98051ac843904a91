# What `cmake --install` puts where (GNU layout under the prefix):
#   bin/impsim, share/man/man1/impsim.1, share/impsim/scenario.schema.json
# tools/check_install.sh (the install_layout test) checks it.
include(GNUInstallDirs)
install(FILES ${PROJECT_SOURCE_DIR}/docs/impsim.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
install(FILES ${PROJECT_SOURCE_DIR}/docs/scenario.schema.json DESTINATION ${CMAKE_INSTALL_DATADIR}/impsim)
