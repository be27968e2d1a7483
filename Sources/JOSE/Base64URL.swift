/// Base64url without padding (RFC 4648 §5, as RFC 7515 §2 uses it).
///
/// Decoding is strict and canonical: it rejects `=`, `+`, `/`, whitespace and any other byte
/// outside the URL-safe alphabet, lengths with `count % 4 == 1`, and non-zero unused trailing
/// bits (so each byte string has exactly one accepted encoding and a JWS segment cannot be
/// altered without changing its decoded bytes).
public enum Base64URL {
    /// The URL-safe alphabet.
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// Value of each byte in the alphabet, or 0xFF.
    private static let values: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (index, byte) in alphabet.enumerated() {
            table[Int(byte)] = UInt8(index)
        }
        return table
    }()

    /// Encodes `bytes` without padding.
    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        let input = Array(bytes)
        var output: [UInt8] = []
        output.reserveCapacity((input.count * 4 + 2) / 3)
        var index = 0
        while index + 3 <= input.count {
            let chunk = UInt32(input[index]) << 16 | UInt32(input[index + 1]) << 8 | UInt32(input[index + 2])
            output.append(alphabet[Int(chunk >> 18 & 0x3F)])
            output.append(alphabet[Int(chunk >> 12 & 0x3F)])
            output.append(alphabet[Int(chunk >> 6 & 0x3F)])
            output.append(alphabet[Int(chunk & 0x3F)])
            index += 3
        }
        switch input.count - index {
        case 1:
            let chunk = UInt32(input[index]) << 16
            output.append(alphabet[Int(chunk >> 18 & 0x3F)])
            output.append(alphabet[Int(chunk >> 12 & 0x3F)])
        case 2:
            let chunk = UInt32(input[index]) << 16 | UInt32(input[index + 1]) << 8
            output.append(alphabet[Int(chunk >> 18 & 0x3F)])
            output.append(alphabet[Int(chunk >> 12 & 0x3F)])
            output.append(alphabet[Int(chunk >> 6 & 0x3F)])
        default:
            break
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// Decodes unpadded base64url, or returns nil for anything not in canonical form.
    public static func decode(_ string: some StringProtocol) -> [UInt8]? {
        let input = Array(string.utf8)
        guard input.count % 4 != 1 else { return nil }
        var output: [UInt8] = []
        output.reserveCapacity(input.count * 3 / 4)
        var accumulator: UInt32 = 0
        var bitCount = 0
        for byte in input {
            let value = values[Int(byte)]
            guard value != 0xFF else { return nil }
            accumulator = accumulator << 6 | UInt32(value)
            bitCount += 6
            if bitCount >= 8 {
                bitCount -= 8
                output.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bitCount)))
                accumulator &= (1 << UInt32(bitCount)) - 1
            }
        }
        // Leftover bits (2 or 4) must be zero for the encoding to be canonical.
        guard accumulator == 0 else { return nil }
        return output
    }
}
