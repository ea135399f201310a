"""Protobuf and gRPC C++ code generation with Debian's protoc and grpc_cpp_plugin (offline)."""

def cc_grpc_proto_library(name, srcs, deps = [], **kwargs):
    """Generates C++ messages and gRPC stubs for `srcs` and wraps them in a cc_library.

    Every .proto is compiled in one protoc call with the workspace root as the import path,
    so `import "proto/x.proto";` works and the headers are included as "proto/x.pb.h".
    """
    bases = [s[:-len(".proto")] for s in srcs]
    pb_h = [b + ".pb.h" for b in bases]
    pb_cc = [b + ".pb.cc" for b in bases]
    grpc_h = [b + ".grpc.pb.h" for b in bases]
    grpc_cc = [b + ".grpc.pb.cc" for b in bases]
    native.genrule(
        name = name + "_gen",
        srcs = srcs,
        outs = pb_h + pb_cc + grpc_h + grpc_cc,
        cmd = ("protoc -I. --cpp_out=$(GENDIR) --grpc_out=$(GENDIR) " +
               "--plugin=protoc-gen-grpc=$$(command -v grpc_cpp_plugin) $(SRCS)"),
    )
    native.cc_library(
        name = name,
        srcs = pb_cc + grpc_cc,
        hdrs = pb_h + grpc_h,
        deps = deps + ["//third_party:grpc", "//third_party:protobuf"],
        **kwargs
    )
