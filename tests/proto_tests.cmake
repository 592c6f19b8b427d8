# proto: schema, envelopes, transcript, key files.
wp_add_test(proto_signing_test SOURCES proto_signing_test.cc LIBS wp_proto)
wp_add_test(proto_codec_test SOURCES proto_codec_test.cc LIBS wp_proto)
wp_add_test(proto_key_files_test SOURCES proto_key_files_test.cc LIBS wp_proto)
wp_add_test(proto_rpc_test SOURCES proto_rpc_test.cc LIBS wp_proto)
