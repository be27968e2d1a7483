package io.github.appleidmock;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/** An SSLContext that trusts one CA (an https mock's, e.g. `appleid-mock tls generate`'s ca.pem). */
final class TrustedCa {
    private TrustedCa() {}

    static SSLContext context(String pemOrPath) {
        try {
            String pem = pemOrPath.contains("-----BEGIN") ? pemOrPath : Files.readString(Path.of(pemOrPath));
            KeyStore store = KeyStore.getInstance(KeyStore.getDefaultType());
            store.load(null, null);
            int index = 0;
            for (Certificate certificate : CertificateFactory.getInstance("X.509")
                    .generateCertificates(new ByteArrayInputStream(pem.getBytes(StandardCharsets.US_ASCII)))) {
                store.setCertificateEntry("ca" + index++, certificate);
            }
            if (index == 0) throw new AppleIDMockError("the CA " + pemOrPath + " holds no PEM certificate");
            TrustManagerFactory trust = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            trust.init(store);
            SSLContext context = SSLContext.getInstance("TLS");
            context.init(null, trust.getTrustManagers(), null);
            return context;
        } catch (IOException | GeneralSecurityException e) {
            throw new AppleIDMockError("the CA " + pemOrPath + ": " + e.getMessage());
        }
    }
}
