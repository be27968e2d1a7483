import COpenSSL

extension EVPKey {
    /// The public exponent of seeded keys (F4, as OpenSSL's own generator uses), as a `BN_ULONG`
    /// (a macro for `unsigned long` on 64-bit Linux, so Swift sees `UInt`).
    private static let seededExponent: UInt = 65537
    /// Candidates drawn for one prime before giving up. A k-bit prime takes about ln(2^k) / 2 odd
    /// candidates on average (≈ 355 for 1024 bits, ≈ 710 for 2048), so no seed comes near this.
    private static let maximumDraws = 100_000
    /// Second primes drawn before giving up, each refused only with probability below 2^-99.
    private static let maximumPairings = 8

    /// An RSA key pair of `bits` bits (public exponent 65537) built from primes drawn from
    /// `random`: the same stream gives the same key in any process. `bits` is a multiple of 16,
    /// at least 1024, checked by the caller.
    ///
    /// p and q are fresh draws of bits/2 bits with the top two bits set (so n has exactly `bits`
    /// bits) and the low bit set, redrawn until `BN_check_prime` calls them prime and
    /// gcd(prime - 1, e) = 1; q is redrawn unless |p - q| > 2^(bits/2 - 100) and
    /// d > 2^(bits/2) (FIPS 186-4 §B.3.1). d = e^-1 mod λ(n), λ(n) = lcm(p - 1, q - 1), as in
    /// FIPS 186-4 and OpenSSL's own generator (not φ(n)). The key passes the same pair check
    /// as every loaded key.
    static func rsa(bits: Int, drawingFrom random: inout SeededRandom) throws(JOSEError) -> EVPKey {
        precondition(bits >= 1024 && bits % 16 == 0, "seeded RSA needs a size its caller checked")
        let primeBits = bits / 2
        // A secure context: its numbers are cleared when freed (and live in the secure heap
        // when the process set one up).
        guard let context = BN_CTX_secure_new() else { throw OpenSSL.failure("BN_CTX_secure_new") }
        defer { BN_CTX_free(context) }
        BN_CTX_start(context)
        defer { BN_CTX_end(context) }
        /// A number owned by `context`, freed with it.
        func number() throws(JOSEError) -> OpaquePointer {
            guard let number = BN_CTX_get(context) else { throw OpenSSL.failure("BN_CTX_get") }
            return number
        }
        let e = try number(), p = try number(), q = try number(), n = try number(), d = try number()
        let dmp1 = try number(), dmq1 = try number(), iqmp = try number()
        let pMinus1 = try number(), qMinus1 = try number(), lambda = try number()
        let scratch = try number(), bound = try number()
        let one = BN_value_one()

        try require(BN_set_word(e, seededExponent), "BN_set_word")
        try drawPrime(into: p, bits: primeBits, random: &random, context: context)
        try require(BN_sub(pMinus1, p, one), "BN_sub")
        var paired = false
        for _ in 0..<maximumPairings where !paired {
            try drawPrime(into: q, bits: primeBits, random: &random, context: context)
            // FIPS 186-4 §B.3.1: |p - q| > 2^(nlen/2 - 100); p == q is the extreme case.
            try require(BN_sub(scratch, p, q), "BN_sub")
            try require(BN_lshift(bound, one, Int32(primeBits - 100)), "BN_lshift")
            guard BN_ucmp(scratch, bound) > 0 else { continue }
            // λ(n) = lcm(p - 1, q - 1) = (p - 1)(q - 1) / gcd(p - 1, q - 1).
            try require(BN_sub(qMinus1, q, one), "BN_sub")
            try require(BN_gcd(scratch, pMinus1, qMinus1, context), "BN_gcd")
            try require(BN_mul(bound, pMinus1, qMinus1, context), "BN_mul")
            try require(BN_div(lambda, nil, bound, scratch, context), "BN_div")
            BN_set_flags(lambda, BN_FLG_CONSTTIME)
            guard BN_mod_inverse(d, e, lambda, context) != nil else { throw OpenSSL.failure("BN_mod_inverse(e)") }
            // FIPS 186-4 §B.3.1: d > 2^(nlen/2).
            try require(BN_lshift(bound, one, Int32(primeBits)), "BN_lshift")
            paired = BN_cmp(d, bound) > 0
        }
        guard paired else {
            throw JOSEError.invalidKey("no seeded second prime met FIPS 186-4 in \(maximumPairings) draws")
        }
        try require(BN_mul(n, p, q, context), "BN_mul")
        try require(BN_div(nil, dmp1, d, pMinus1, context), "BN_div")
        try require(BN_div(nil, dmq1, d, qMinus1, context), "BN_div")
        BN_set_flags(p, BN_FLG_CONSTTIME)
        guard BN_mod_inverse(iqmp, q, p, context) != nil else { throw OpenSSL.failure("BN_mod_inverse(q)") }

        // The builder keeps the name pointers, so they must be static strings.
        let parameters: [(name: StaticString, value: OpaquePointer)] = [
            ("n", n), ("e", e), ("d", d), ("rsa-factor1", p), ("rsa-factor2", q),
            ("rsa-exponent1", dmp1), ("rsa-exponent2", dmq1), ("rsa-coefficient1", iqmp),
        ]
        let key = try fromData(selection: shim_EVP_PKEY_KEYPAIR(), rejected: "seeded RSA key") { builder in
            parameters.allSatisfy { OSSL_PARAM_BLD_push_BN(builder, OpenSSL.cString($0.name), $0.value) == 1 }
        }
        try key.checkPair()
        return key
    }

    /// Draws `bits`-bit candidates from `random` into `prime`, top two bits and low bit set,
    /// until one is prime with gcd(prime - 1, e) = 1.
    private static func drawPrime(
        into prime: OpaquePointer,
        bits: Int,
        random: inout SeededRandom,
        context: OpaquePointer
    ) throws(JOSEError) {
        for _ in 0..<maximumDraws {
            var candidate = random.bytes(bits / 8)
            candidate[0] |= 0xC0
            candidate[candidate.count - 1] |= 1
            guard BN_bin2bn(candidate, Int32(candidate.count), prime) != nil else {
                throw OpenSSL.failure("BN_bin2bn")
            }
            // e is prime, so gcd(prime - 1, e) = 1 exactly when prime mod e != 1; checked first
            // because it costs nothing beside the primality test.
            let remainder = BN_mod_word(prime, seededExponent)
            // BN_mod_word answers (BN_ULONG)-1 on error.
            guard remainder != UInt.max else { throw OpenSSL.failure("BN_mod_word") }
            guard remainder != 1 else { continue }
            switch BN_check_prime(prime, context, nil) {
            case 1: return
            case 0: continue
            default: throw OpenSSL.failure("BN_check_prime")
            }
        }
        throw JOSEError.invalidKey("no \(bits)-bit prime in \(maximumDraws) seeded draws")
    }

    /// Throws a failure naming `call` unless `status` is 1 (OpenSSL's success).
    private static func require(_ status: Int32, _ call: String) throws(JOSEError) {
        guard status == 1 else { throw OpenSSL.failure(call) }
    }
}
