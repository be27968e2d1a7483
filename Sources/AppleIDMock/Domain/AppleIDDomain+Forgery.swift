import JOSE

extension AppleIDDomain {
    /// What kind of token `forge` makes.
    enum ForgedKind: String, Sendable, CaseIterable {
        /// An identity token, as `/auth/token` and the authorize callback deliver it.
        case identityToken = "id_token"
        /// A server-to-server notification's JWT (the `payload` Apple posts, §7).
        case notification
    }

    /// An identity token for `userID` at `clientID` as a sign-in would give now (changing
    /// nothing), with `overrides` set over its claims (a JSON null removes a claim) and then
    /// `defect` applied.
    func forgeIdentityToken(userID: String, clientID: String, nonce: String?, overrides: JSONObject,
                                   defect: TokenDefect?) throws -> String {
        let request = GrantRequest(flow: .web, userID: userID, clientID: clientID, scopes: ["email"], hideEmail: nil, nonce: nonce, issuesCode: false)
        let result: GrantResult
        do {
            result = try owner.perform { world, now, changes throws(GrantError) in try world.grant(request, now: now, &changes) }.0
        } catch {
            throw Self.nativeError(error)
        }
        var claims = result.claims.json(scenario.compatibility)
        for (name, value) in overrides { claims[name] = value == .null ? JSONValue?.none : value }
        return try sign(claims: claims, with: result.signingKey, defect: defect, nonce: nonce)
    }

    /// The notification Apple would send the app group of `clientID` about `type` for `userID`
    /// now (§7), changing nothing, with `overrides` over its claims and `defect` applied.
    func forgeNotification(type: AccountEventType, userID: String, clientID: String, overrides: JSONObject,
                                  defect: TokenDefect?) throws -> String {
        if defect == .nonceMismatch {
            throw ControlInputError(message: "nonce-mismatch applies to identity tokens only (a notification has no nonce)", field: "defect")
        }
        guard let entry = clients.entry(clientID) else {
            throw SignInRefusal.invalid(field: "client_id", message: "no client \"\(clientID)\" in the scenario")
        }
        let (record, key): (AccountEventRecord?, KeyRing.SigningKey?) = owner.read { world, now in
            guard let (resolved, _) = world.resolveUser(userID) else { return (nil, nil) }
            let teamID = entry.team.teamID
            let milliseconds = scenario.compatibility.eventTimeUnit == .milliseconds
            let email = type == .emailDisabled || type == .emailEnabled ? world.relayAddress(teamID: teamID, userID: resolved) : nil
            return (AccountEventRecord(type: type, userID: resolved, teamID: teamID, groupID: entry.groupID,
                                       subject: Identity.subject(teamID: teamID, userID: resolved), eventTime: milliseconds ? now * 1000 : now,
                                       at: now, email: email, notificationID: Base64URL.encode(SHA256.hash(Array("\(resolved) \(clientID) \(now)".utf8)))
                                           .prefix(32).lowercased(),
                                       signingKeyID: world.signingKey?.keyID, timelineIndex: nil), world.signingKey)
        }
        guard let record else { throw SignInRefusal.invalid(field: "user", message: "no user \"\(userID)\" in the scenario") }
        let pending = NotificationDeliverer.notification(for: record, sequence: 0, scenario: scenario, issuer: issuer)
        guard var claims = (try? JSONParser.parse(pending.payload))?.objectValue else {
            throw ControlInputError(message: "the notification could not be built", field: "type")
        }
        if defect == .missingSub { claims = Self.removingEventSubject(claims) }
        for (name, value) in overrides { claims[name] = value == .null ? JSONValue?.none : value }
        return try sign(claims: claims, with: key, defect: defect == .missingSub ? nil : defect, nonce: nil)
    }

    /// `claims` with `sub` taken out of the `events` claim, whether it is a JSON string or an object.
    private static func removingEventSubject(_ claims: JSONObject) -> JSONObject {
        var claims = claims
        switch claims["events"] {
        case .string(let text):
            if var events = (try? JSONParser.parse(Array(text.utf8)))?.objectValue {
                events["sub"] = JSONValue?.none
                claims["events"] = .string(String(decoding: JSONWriter.compact(.object(events)), as: UTF8.self))
            }
        case .object(var events):
            events["sub"] = JSONValue?.none
            claims["events"] = .object(events)
        default:
            break
        }
        return claims
    }

    /// Signs `claims` as the mock signs, then spoils the result as `defect` says (nil: genuine).
    func sign(claims: JSONObject, with key: KeyRing.SigningKey?, defect: TokenDefect?, nonce: String?) throws -> String {
        guard let key else { throw JOSEError.invalidKey("no signing key is published") }
        var claims = claims
        let now = claims["iat"]?.intValue ?? now
        let lifetime = max(0, (claims["exp"]?.intValue ?? now) - (claims["iat"]?.intValue ?? now))
        switch defect {
        case .expired:
            claims["exp"] = .int(now - 3600)
            claims["iat"] = .int(now - 3600 - lifetime)
        case .notYetValid:
            claims["iat"] = .int(now + 3600)
            claims["exp"] = .int(now + 3600 + lifetime)
        case .iatFarPast:
            claims["iat"] = .int(now - 30 * 86_400)
        case .wrongIssuer:
            claims["iss"] = .string(Self.forgedIssuer)
        case .wrongAudience:
            claims["aud"] = .string(Self.forgedAudience)
        case .missingSub:
            claims["sub"] = JSONValue?.none
        case .nonceMismatch:
            // Deterministic and unlike the nonce sent: no prefix, suffix or case of it.
            claims["nonce"] = .string(Base64URL.encode(SHA256.hash(Array("tampered nonce: \(nonce ?? "")".utf8))))
        case .badSignature, .unknownKid, .algNone, .hs256PublicKey, .retiredKey, nil:
            break
        }
        let payload = JSONWriter.compact(.object(claims))
        switch defect {
        case .badSignature:
            let genuine = try CompactJWS.signRS256(payload: payload, kid: key.keyID, key: key.privateKey)
            var signature = genuine.signature
            signature[signature.count / 2] ^= 0x01
            return CompactJWS(header: genuine.header, payload: payload, signature: signature).compact
        case .unknownKid:
            let published = Set(keys.records.map(\.keyID))
            var kid = "X" + key.keyID
            while published.contains(kid) { kid += "X" }
            return try CompactJWS.signRS256(payload: payload, kid: kid, key: key.privateKey).compact
        case .algNone:
            return CompactJWS(header: JSONObject([("kid", .string(key.keyID)), ("alg", "none")]), payload: payload, signature: []).compact
        case .hs256PublicKey:
            let header = JSONObject([("kid", .string(key.keyID)), ("alg", "HS256")])
            let unsigned = CompactJWS(header: header, payload: payload, signature: [])
            let secret = Array(try key.privateKey.publicKey.pem.utf8)
            return CompactJWS(header: header, payload: payload, signature: HMACSHA256.mac(key: secret, message: unsigned.signingInput)).compact
        case .retiredKey:
            let retired = try unpublishedKey()
            return try CompactJWS.signRS256(payload: payload, kid: retired.keyID, key: retired.privateKey).compact
        default:
            return try CompactJWS.signRS256(payload: payload, kid: key.keyID, key: key.privateKey).compact
        }
    }

    /// The issuer `wrong-issuer` writes: a look-alike of Apple's on another host.
    static let forgedIssuer = "https://appleid.apple.com.attacker.example"
    /// The audience `wrong-audience` writes: another app's client id.
    static let forgedAudience = "com.attacker.app"

    /// The most recently retired key when it is still known and not published again, else a key
    /// the mock made for forging and never published (generated once, on first use).
    private func unpublishedKey() throws -> KeyRing.SigningKey {
        let (retired, published) = owner.read { world, _ in (world.lastRetiredKey, Set(world.keys.filter { $0.state != .retired }.map(\.keyID))) }
        if let retired, !published.contains(retired.keyID) { return retired }
        if let made = forgeryKey.withLock({ $0 }) { return made }
        let made = try KeyRing.generate(keyID: nil, random: .system)
        return forgeryKey.withLock { key in
            if key == nil { key = made }
            return key!
        }
    }
}
