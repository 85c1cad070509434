package io.scrouter.testkit.grpc;

import io.grpc.MethodDescriptor;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;

/** Passes gRPC messages through as bytes, for stand-ins that forward or fake calls without their protos. */
public final class RawBytes implements MethodDescriptor.Marshaller<byte[]> {

    public static final RawBytes INSTANCE = new RawBytes();

    private RawBytes() {
    }

    @Override
    public InputStream stream(byte[] value) {
        return new ByteArrayInputStream(value);
    }

    @Override
    public byte[] parse(InputStream stream) {
        try {
            return stream.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
