package io.scrouter.testkit.redis;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.Key;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A throw-away self-signed certificate for {@code 127.0.0.1} (in its subject alternative names, so hostname
 * verification passes), made with the JDK's own {@code keytool}, so no {@code openssl} is needed: the PEM
 * files {@code redis-server --tls-*} reads, and a PKCS12 trust store holding only the certificate, which a
 * JVM client trusts it by. Valid for two days.
 */
public record LoopbackCertificate(Path certificatePem, Path privateKeyPem, Path trustStore, String trustStorePassword) {

    private static final String ALIAS = "redis";

    public static LoopbackCertificate create(Path dir) throws IOException, InterruptedException {
        Files.createDirectories(dir);
        Path keyStore = dir.resolve("server.p12");
        String password = "loopback-only";
        String keytool = Path.of(System.getProperty("java.home"), "bin", "keytool").toString();
        Process p = new ProcessBuilder(keytool, "-genkeypair", "-alias", ALIAS, "-keyalg", "EC", "-groupname",
                "secp256r1", "-dname", "CN=127.0.0.1", "-ext", "san=ip:127.0.0.1", "-validity", "2",
                "-keystore", keyStore.toString(), "-storetype", "PKCS12", "-storepass", password)
                .redirectErrorStream(true).redirectOutput(dir.resolve("keytool.log").toFile()).start();
        if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
            p.destroyForcibly();
            throw new IOException("keytool could not create a certificate: " + Files.readString(dir.resolve("keytool.log")));
        }
        try {
            KeyStore store = KeyStore.getInstance("PKCS12");
            try (InputStream in = Files.newInputStream(keyStore)) {
                store.load(in, password.toCharArray());
            }
            Certificate certificate = store.getCertificate(ALIAS);
            Key key = store.getKey(ALIAS, password.toCharArray());
            Path certPem = dir.resolve("cert.pem");
            Path keyPem = dir.resolve("key.pem");
            Files.writeString(certPem, pem("CERTIFICATE", certificate.getEncoded()));
            // PKCS#8 ("BEGIN PRIVATE KEY"), which OpenSSL, and so redis-server, reads for any key type.
            Files.writeString(keyPem, pem("PRIVATE KEY", key.getEncoded()));
            KeyStore trust = KeyStore.getInstance("PKCS12");
            trust.load(null, null);
            trust.setCertificateEntry(ALIAS, certificate);
            Path trustStore = dir.resolve("truststore.p12");
            try (OutputStream out = Files.newOutputStream(trustStore)) {
                trust.store(out, password.toCharArray());
            }
            return new LoopbackCertificate(certPem, keyPem, trustStore, password);
        } catch (GeneralSecurityException e) {
            throw new IOException("could not read back the certificate keytool made: " + e, e);
        }
    }

    /** {@code redis-server} arguments that serve TLS on {@code tlsPort} with this certificate, no client certificates. */
    public List<String> redisServerArgs(int tlsPort) {
        return List.of("--tls-port", Integer.toString(tlsPort), "--tls-cert-file", certificatePem.toString(),
                "--tls-key-file", privateKeyPem.toString(), "--tls-ca-cert-file", certificatePem.toString(),
                "--tls-auth-clients", "no");
    }

    private static String pem(String type, byte[] der) {
        return "-----BEGIN " + type + "-----\n" + Base64.getMimeEncoder(64, "\n".getBytes()).encodeToString(der)
                + "\n-----END " + type + "-----\n";
    }
}
