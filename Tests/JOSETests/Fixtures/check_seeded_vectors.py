#!/usr/bin/env python3
"""Recomputes the values SeededRandomTests and RSAPrivateKeySeededTests pin, independently of
the Swift code (hashlib and hmac only; Miller-Rabin in place of OpenSSL's BN_check_prime).

    python3 Tests/JOSETests/Fixtures/check_seeded_vectors.py
"""
import hashlib
import hmac
import math
import random
import struct

DOMAIN = b"AppleIDMock seeded random v1"


class Stream:
    """SeededRandom v1: block i = HMAC-SHA-256(key, i as a big-endian UInt64)."""

    def __init__(self, key):
        self.key, self.block, self.pending = key, 0, b""

    @classmethod
    def seeded(cls, seed):
        return cls(hashlib.sha256(DOMAIN + seed).digest())

    def derived(self, label):
        return Stream(hashlib.sha256(self.key + label.encode()).digest())

    def bytes(self, count):
        while len(self.pending) < count:
            self.pending += hmac.new(self.key, struct.pack(">Q", self.block), hashlib.sha256).digest()
            self.block += 1
        out, self.pending = self.pending[:count], self.pending[count:]
        return out


def probably_prime(n, rounds=64):
    for small in (3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37):
        if n % small == 0:
            return n == small
    d, s = n - 1, 0
    while d % 2 == 0:
        d, s = d // 2, s + 1
    rng = random.SystemRandom()
    for _ in range(rounds):
        x = pow(rng.randrange(2, n - 1), d, n)
        if x in (1, n - 1):
            continue
        for _ in range(s - 1):
            x = x * x % n
            if x == n - 1:
                break
        else:
            return False
    return True


def seeded_rsa_modulus(seed, bits, e=65537):
    """RSAPrivateKey.generate(bits:seed:): the same draws and checks, in the same order."""
    stream = Stream.seeded(seed).derived(f"RSA-{bits} primes")
    prime_bits = bits // 2

    def draw_prime():
        while True:
            candidate = bytearray(stream.bytes(prime_bits // 8))
            candidate[0] |= 0xC0
            candidate[-1] |= 1
            value = int.from_bytes(candidate, "big")
            if value % e != 1 and probably_prime(value):
                return value

    p = draw_prime()
    while True:
        q = draw_prime()
        if abs(p - q) <= 2 ** (prime_bits - 100):
            continue
        lam = (p - 1) * (q - 1) // math.gcd(p - 1, q - 1)
        if pow(e, -1, lam) > 2 ** prime_bits:
            return p * q


seven = Stream.seeded(struct.pack(">Q", 7))
print("seed 7, first 75 bytes:", seven.bytes(75).hex())
print("seed 7, derived \"a\", first 32:", Stream.seeded(struct.pack(">Q", 7)).derived("a").bytes(32).hex())
print("empty seed, first 32:", Stream.seeded(b"").bytes(32).hex())
n = seeded_rsa_modulus(b"AppleIDMock seeded key tests", 2048)
print("SHA-256 of the 2048-bit seeded modulus:", hashlib.sha256(n.to_bytes(256, "big")).hexdigest())
