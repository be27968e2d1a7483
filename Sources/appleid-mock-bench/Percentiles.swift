/// Order statistics of a sample.
struct Percentiles {
    private let sorted: [Double]

    init(_ sample: [Double]) {
        sorted = sample.sorted()
    }

    /// The value below which `fraction` of the sample falls (nearest rank); 0 when empty.
    func value(_ fraction: Double) -> Double {
        guard !sorted.isEmpty else { return 0 }
        let rank = Int((fraction * Double(sorted.count)).rounded(.up)) - 1
        return sorted[min(max(rank, 0), sorted.count - 1)]
    }

    /// The median.
    var median: Double { value(0.5) }
}
