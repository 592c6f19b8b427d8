# challenger ledger: store, tamper detection, faults (crash, disk full), export and CLI.
wp_add_test(ledger_store_test SOURCES ledger_store_test.cc LIBS wp_ledger)
wp_add_test(ledger_tamper_test SOURCES ledger_tamper_test.cc LIBS wp_ledger)
wp_add_test(ledger_faults_test SOURCES ledger_faults_test.cc LIBS wp_ledger)
wp_add_test(ledger_export_test SOURCES ledger_export_test.cc LIBS wp_ledger)
wp_add_test(ledger_cli_test SOURCES ledger_cli_test.cc LIBS wp_ledger)
