# Debian packages (CPack, `cpack -G DEB` in the build folder; docs/deploy.md):
#   wipeproof-agent       /usr/bin/wipeproof-prover, wipeproof-agent.service, the example agent.env
#   wipeproof-challenger  /usr/bin/wipeproof-challenger, wipeproof-challenger.service, the example
#                         challenger.env, inventory.json and the Prometheus alert rules
# each with the docs an operator needs under /usr/share/doc/<package>/, a postinst that creates the
# services' user `wipeproof` and /etc/wipeproof, and its library dependencies from dpkg-shlibdeps.
include(GNUInstallDirs)
# cpack installs what is built already; it never starts a build of everything itself.
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY ON)
set(_doc_files ${PROJECT_SOURCE_DIR}/README.md ${PROJECT_SOURCE_DIR}/docs/deploy.md
               ${PROJECT_SOURCE_DIR}/docs/operations.md ${PROJECT_SOURCE_DIR}/docs/first-fleet.md
               ${PROJECT_SOURCE_DIR}/docs/threat-model.md)

install(TARGETS wipeproof-prover RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT agent)
install(FILES ${PROJECT_SOURCE_DIR}/deploy/systemd/wipeproof-agent.service DESTINATION lib/systemd/system
        COMPONENT agent)
install(FILES ${PROJECT_SOURCE_DIR}/deploy/config/agent.env DESTINATION share/doc/wipeproof-agent/examples
        COMPONENT agent)
install(FILES ${_doc_files} DESTINATION share/doc/wipeproof-agent COMPONENT agent)

install(TARGETS wipeproof-challenger RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT challenger)
install(FILES ${PROJECT_SOURCE_DIR}/deploy/systemd/wipeproof-challenger.service DESTINATION lib/systemd/system
        COMPONENT challenger)
install(FILES ${PROJECT_SOURCE_DIR}/deploy/config/challenger.env ${PROJECT_SOURCE_DIR}/deploy/config/inventory.json
              ${PROJECT_SOURCE_DIR}/deploy/prometheus/wipeproof-alerts.yml
        DESTINATION share/doc/wipeproof-challenger/examples COMPONENT challenger)
install(FILES ${_doc_files} ${PROJECT_SOURCE_DIR}/docs/audit.md ${PROJECT_SOURCE_DIR}/docs/calibration.md
        DESTINATION share/doc/wipeproof-challenger COMPONENT challenger)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME wipeproof)
set(CPACK_PACKAGE_VENDOR wipeproof)
set(CPACK_PACKAGE_CONTACT "wipeproof maintainers <wipeproof@localhost>")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL agent challenger)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_AGENT_PACKAGE_NAME wipeproof-agent)
set(CPACK_DEBIAN_CHALLENGER_PACKAGE_NAME wipeproof-challenger)
set(CPACK_COMPONENT_AGENT_DESCRIPTION
    "wipeproof prover agent: proves GPU and host memory was wiped\n The agent (wipeproof-prover serve) fills a node's GPU and host memory with labels of a\n depth-robust graph on the challenger's signed order and answers its timed challenge rounds.")
set(CPACK_COMPONENT_CHALLENGER_DESCRIPTION
    "wipeproof challenger: schedules, verifies and records wipes\n The challenger (wipeproof-challenger serve) runs the inventory's waves, drains and resumes\n nodes around their wipes, and signs each verdict into a hash-chained ledger.")
set(CPACK_DEBIAN_AGENT_PACKAGE_CONTROL_EXTRA ${PROJECT_SOURCE_DIR}/deploy/debian/postinst)
set(CPACK_DEBIAN_CHALLENGER_PACKAGE_CONTROL_EXTRA ${PROJECT_SOURCE_DIR}/deploy/debian/postinst)
set(CPACK_DEBIAN_AGENT_PACKAGE_DEPENDS "passwd")
set(CPACK_DEBIAN_CHALLENGER_PACKAGE_DEPENDS "passwd")
set(CPACK_DEBIAN_CHALLENGER_PACKAGE_SUGGESTS "slurm-client")
include(CPack)
