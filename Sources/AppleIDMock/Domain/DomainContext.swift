import JOSE

/// What the domain's operations read and never change: the scenario, its clients, the issuer.
struct DomainContext: Sendable {
    let scenario: Scenario
    let clients: ClientDirectory
    let issuer: String
    /// The keys the mock starts with (and returns to on reset).
    let ring: KeyRing
    /// With `--seed`: where generated RSA keys come from (the nth from `derived("key n")`).
    let keySeed: SeededRandom?
    /// Most codes held unredeemed at once.
    let codeCapacity: Int
    /// With `--seed`: where fault probabilities are drawn from (fresh entropy otherwise).
    let faultSeed: SeededRandom?
    /// The scenario's users by `sub` and relay address, shared by every `World` (start, reset);
    /// made at the first lookup, so a mock that is never asked hashes nothing and touches no
    /// digest code (idle memory is a benchmark target).
    let scenarioUserIndex: ScenarioUserIndex

    /// The context of `scenario`.
    init(scenario: Scenario, clients: ClientDirectory, issuer: String, ring: KeyRing, keySeed: SeededRandom?, codeCapacity: Int,
         faultSeed: SeededRandom? = nil) {
        self.faultSeed = faultSeed
        self.scenario = scenario
        self.clients = clients
        self.issuer = issuer
        self.ring = ring
        self.keySeed = keySeed
        self.codeCapacity = codeCapacity
        scenarioUserIndex = ScenarioUserIndex(scenario: scenario)
    }
}
