# What `cmake --install` puts where (GNU layout under the prefix):
#   bin/impsim, share/man/man1/impsim.1, share/impsim/{scenario,report}.schema.json,
#   share/bash-completion/completions/impsim, share/zsh/vendor-completions/_impsim
# tools/check/check_install.sh (the install_layout test) checks it.
include(GNUInstallDirs)
install(FILES ${PROJECT_SOURCE_DIR}/docs/impsim.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
install(FILES ${PROJECT_SOURCE_DIR}/docs/scenario.schema.json DESTINATION ${CMAKE_INSTALL_DATADIR}/impsim)
# The JSON Schema of the reports, and shell completion (bash-completion and
# zsh look in these directories under the prefix).
install(FILES ${PROJECT_SOURCE_DIR}/docs/report.schema.json DESTINATION ${CMAKE_INSTALL_DATADIR}/impsim)
install(FILES ${PROJECT_SOURCE_DIR}/docs/completion/impsim.bash DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions
        RENAME impsim)
install(FILES ${PROJECT_SOURCE_DIR}/docs/completion/_impsim DESTINATION ${CMAKE_INSTALL_DATADIR}/zsh/vendor-completions)
