wp_add_test(kernels_blake3_test SOURCES kernels_blake3_test.cc LIBS wp_kernels nlohmann_json::nlohmann_json)
wp_add_test(kernels_labels_test SOURCES kernels_labels_test.cc LIBS wp_kernels nlohmann_json::nlohmann_json PkgConfig::SODIUM)
wp_add_test(kernels_graph_test SOURCES kernels_graph_test.cc LIBS wp_kernels)
wp_add_test(kernels_region_test SOURCES kernels_region_test.cc LIBS wp_kernels)
