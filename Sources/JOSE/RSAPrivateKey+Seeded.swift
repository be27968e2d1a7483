extension RSAPrivateKey {
    /// The sizes a seeded key may have: 2048 to 4096 bits in steps of 256.
    private static let seededSizes = stride(from: 2048, through: 4096, by: 256)

    /// A key that depends only on `seed` and `bits`: the same key (modulus, PEM) in any process,
    /// another key for another seed. Public exponent 65537; `bits` is 2048...4096 in steps of
    /// 256. For tests and `--seed` runs: the key is exactly as secret as its seed.
    public static func generate(bits: Int, seed: [UInt8]) throws(JOSEError) -> RSAPrivateKey {
        guard seededSizes.contains(bits) else {
            throw JOSEError.invalidKey("seeded RSA key size \(bits) is not 2048...4096 in steps of 256")
        }
        // A labelled stream, so a seed that also seeds other streams never hands out the primes'
        // bytes there, and each size draws its own primes.
        var random = SeededRandom(seed: seed).derived("RSA-\(bits) primes")
        return try RSAPrivateKey(checked: EVPKey.rsa(bits: bits, drawingFrom: &random))
    }
}
