/// RSA-2048 signatures per second on every core, by `openssl speed -multi`: the most id_tokens
/// this machine can sign, whoever does it.
enum SigningCeiling {
    /// Signatures per second, or nil without openssl.
    static func measure(cores: Int, seconds: Int) -> Double? {
        guard let openssl = Tool.find("openssl"),
              let output = Tool.run(openssl, ["speed", "-seconds", "\(seconds)", "-multi", "\(cores)", "rsa2048"]) else { return nil }
        // "rsa 2048 bits 0.000143s 0.000009s   6973.0 106148.0": sign/s is the sixth field.
        guard let line = output.split(separator: "\n").last(where: { $0.hasPrefix("rsa 2048 bits") }) else { return nil }
        let fields = line.split(separator: " ")
        return fields.count >= 7 ? Double(fields[5]) : nil
    }
}
