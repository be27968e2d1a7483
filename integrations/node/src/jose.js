// The two JOSE operations the kit needs, with node:crypto: an ES256 client_secret (raw R‖S, as
// JWS wants, not DER) and an RS256 check of a notification against a key /auth/keys publishes.
import { createPrivateKey, createPublicKey, sign, verify } from 'node:crypto';

export function b64url(data) {
  return Buffer.from(data).toString('base64url');
}

// A JWS compact serialization's header and claims, unverified. Throws naming what is malformed.
export function decodeUnverified(token) {
  if (typeof token !== 'string') throw new Error('the token is not a string');
  const parts = token.split('.');
  if (parts.length !== 3) throw new Error(`the token has ${parts.length} parts, not 3`);
  const read = (part, what) => {
    let value;
    try {
      value = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
    } catch {
      throw new Error(`the token's ${what} is not base64url JSON`);
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new Error(`the token's ${what} is not a JSON object`);
    return value;
  };
  return { header: read(parts[0], 'header'), claims: read(parts[1], 'claims') };
}

// The private key of a PKCS#8 PEM (an App Store Connect .p8), checked to be a P-256 EC key.
export function p256PrivateKey(pem) {
  let key;
  try {
    key = createPrivateKey({ key: pem, format: 'pem' });
  } catch (error) {
    throw new Error(`expected a PKCS#8 PEM (-----BEGIN PRIVATE KEY-----), as an App Store Connect .p8 is: ${error.message}`);
  }
  if (key.asymmetricKeyType !== 'ec' || key.asymmetricKeyDetails?.namedCurve !== 'prime256v1') {
    const curve = key.asymmetricKeyDetails?.namedCurve;
    throw new Error(`the key is ${key.asymmetricKeyType}${curve ? ` on ${curve}` : ''}, not an EC P-256 key`);
  }
  return key;
}

export function es256Jwt(header, claims, key) {
  const input = `${b64url(JSON.stringify(header))}.${b64url(JSON.stringify(claims))}`;
  const signature = sign('sha256', Buffer.from(input), { key, dsaEncoding: 'ieee-p1363' });
  return `${input}.${b64url(signature)}`;
}

// Whether `token`'s RS256 signature verifies under `jwk` (an RSA JWK of /auth/keys).
export function rs256Valid(token, jwk) {
  const parts = token.split('.');
  if (parts.length !== 3) return false;
  let key;
  try {
    key = createPublicKey({ key: { kty: jwk.kty, n: jwk.n, e: jwk.e }, format: 'jwk' });
  } catch {
    return false;
  }
  return verify('sha256', Buffer.from(`${parts[0]}.${parts[1]}`), key, Buffer.from(parts[2], 'base64url'));
}
