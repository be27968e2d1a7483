package io.github.appleidmock;

import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.Signature;
import java.security.interfaces.ECPrivateKey;
import java.security.spec.PKCS8EncodedKeySpec;
import java.security.spec.RSAPublicKeySpec;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/** The JOSE the kit needs, with the JDK: an ES256 client_secret (raw R‖S) and an RS256 check. */
final class Jose {
    private Jose() {}

    // The order of P-256's base point (FIPS 186-4 D.1.2.3): an EC key on any other curve differs.
    private static final BigInteger P256_ORDER = new BigInteger("FFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551", 16);

    static String b64(byte[] data) {
        return Base64.getUrlEncoder().withoutPadding().encodeToString(data);
    }

    /** The P-256 private key of a PKCS#8 PEM (an App Store Connect .p8). */
    static PrivateKey p256PrivateKey(String pem) {
        String body = pem.replaceAll("-----(BEGIN|END) PRIVATE KEY-----", "").replaceAll("\\s", "");
        if (!pem.contains("-----BEGIN PRIVATE KEY-----")) {
            throw new IllegalArgumentException("expected a PKCS#8 PEM (-----BEGIN PRIVATE KEY-----), as an App Store Connect .p8 is");
        }
        byte[] der;
        try {
            der = Base64.getDecoder().decode(body);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("the PEM's body is not base64");
        }
        for (String algorithm : List.of("EC", "RSA")) {
            PrivateKey key;
            try {
                key = KeyFactory.getInstance(algorithm).generatePrivate(new PKCS8EncodedKeySpec(der));
            } catch (GeneralSecurityException e) {
                continue;
            }
            if (key instanceof ECPrivateKey ec && ec.getParams().getOrder().equals(P256_ORDER)) return key;
            throw new IllegalArgumentException("the key is " + key.getAlgorithm() + (key instanceof ECPrivateKey ? " on another curve" : "") + ", not an EC P-256 key");
        }
        throw new IllegalArgumentException("expected a PKCS#8 PEM, as an App Store Connect .p8 is: no EC or RSA key in it");
    }

    static String es256(Map<String, Object> header, Map<String, Object> claims, PrivateKey key) {
        String input = b64(Json.write(header).getBytes(StandardCharsets.UTF_8)) + "." + b64(Json.write(claims).getBytes(StandardCharsets.UTF_8));
        try {
            Signature signer = Signature.getInstance("SHA256withECDSAinP1363Format");
            signer.initSign(key);
            signer.update(input.getBytes(StandardCharsets.US_ASCII));
            return input + "." + b64(signer.sign());
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("ES256 signing failed", e);
        }
    }

    /** A token's header and claims, its RS256 signature checked under the JWK key(kid) answers. */
    record Verified(String kid, Map<String, Object> claims) {}

    @SuppressWarnings("unchecked")
    static Verified verifyRS256(String token, Function<String, Map<String, Object>> key) {
        String[] parts = token.split("\\.", -1);
        if (parts.length != 3) throw new IllegalArgumentException("the token has " + parts.length + " parts, not 3");
        Object header = decode(parts[0]);
        if (!(header instanceof Map)) throw new IllegalArgumentException("the token's header is not base64url JSON");
        Object claims = decode(parts[1]);
        if (!(claims instanceof Map)) throw new IllegalArgumentException("the token's claims are not base64url JSON");
        Map<String, Object> h = (Map<String, Object>) header;
        if (!"RS256".equals(h.get("alg"))) throw new IllegalArgumentException("alg is " + quoted(h.get("alg")) + ", not RS256");
        String kid = String.valueOf(h.get("kid"));
        Map<String, Object> jwk = key.apply(kid);
        if (!rs256Valid(parts, jwk)) throw new IllegalArgumentException("the RS256 signature does not verify under " + kid);
        return new Verified(kid, (Map<String, Object>) claims);
    }

    static String quoted(Object value) {
        return value instanceof String ? Json.write(value) : String.valueOf(value);
    }

    private static Object decode(String part) {
        try {
            return Json.parse(new String(Base64.getUrlDecoder().decode(part), StandardCharsets.UTF_8));
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    private static boolean rs256Valid(String[] parts, Map<String, Object> jwk) {
        try {
            BigInteger n = new BigInteger(1, Base64.getUrlDecoder().decode((String) jwk.get("n")));
            BigInteger e = new BigInteger(1, Base64.getUrlDecoder().decode((String) jwk.get("e")));
            PublicKey key = KeyFactory.getInstance("RSA").generatePublic(new RSAPublicKeySpec(n, e));
            Signature verifier = Signature.getInstance("SHA256withRSA");
            verifier.initVerify(key);
            verifier.update((parts[0] + "." + parts[1]).getBytes(StandardCharsets.US_ASCII));
            return verifier.verify(Base64.getUrlDecoder().decode(parts[2]));
        } catch (GeneralSecurityException | IllegalArgumentException | ClassCastException | NullPointerException e) {
            return false;
        }
    }
}
