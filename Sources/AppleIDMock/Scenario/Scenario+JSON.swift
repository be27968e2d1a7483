import JOSE

extension Scenario {
    /// The scenario as JSON, every field written out (defaults included), keys in a fixed order.
    package var json: JSONValue {
        var top = JSONObject()
        top["teams"] = .array(teams.map(\.json))
        top["users"] = .array(users.map(\.json))
        var keys = JSONObject()
        keys["count"] = .int(Int64(signingKeys.count))
        keys["directory"] = signingKeys.directory.map(JSONValue.string) ?? .null
        keys["active_kid"] = signingKeys.activeKeyID.map(JSONValue.string) ?? .null
        keys["max_published"] = .int(Int64(signingKeys.maxPublished))
        if let rotation = signingKeys.rotation {
            var pattern = JSONObject()
            pattern["every"] = .int(Int64(rotation.every))
            pattern["publish_ahead"] = .int(Int64(rotation.publishAhead))
            pattern["retire_after"] = .int(Int64(rotation.retireAfter))
            keys["rotation"] = .object(pattern)
        } else {
            keys["rotation"] = .null
        }
        top["signing_keys"] = .object(keys)
        var times = JSONObject()
        times["authorization_code"] = .int(Int64(lifetimes.authorizationCode))
        times["access_token"] = .int(Int64(lifetimes.accessToken))
        times["id_token"] = .int(Int64(lifetimes.idToken))
        times["transfer_window"] = .int(Int64(lifetimes.transferWindow))
        top["lifetimes"] = .object(times)
        top["compatibility"] = compatibility.json
        if let autoApprove {
            var auto = JSONObject()
            auto["user"] = .string(autoApprove.user)
            auto["hide_email"] = autoApprove.hideEmail.map(JSONValue.bool) ?? .null
            top["auto_approve"] = .object(auto)
        } else {
            top["auto_approve"] = .null
        }
        var clockObject = JSONObject()
        clockObject["start"] = clock.start.map { .string(RFC3339.format($0)) } ?? .null
        clockObject["frozen"] = .bool(clock.frozen)
        top["clock"] = .object(clockObject)
        top["events"] = .array(events.map { event in
            var object = JSONObject()
            object["at"] = .int(Int64(event.at))
            object["type"] = .string(event.type)
            object["user"] = .string(event.user)
            object["client_id"] = .string(event.clientID)
            return .object(object)
        })
        // A seed beyond Int64.max (only a Swift-built scenario has one) is written inexactly, so
        // the file is refused at load instead of seeding another stream.
        top["seed"] = seed.map { Int64(exactly: $0).map(JSONValue.int) ?? .double(Double($0)) } ?? .null
        top["journal"] = .object(["capacity": .int(Int64(journalCapacity))])
        top["mail"] = .object(["capacity": .int(Int64(mail.capacity)), "max_bytes": .int(Int64(mail.maxBytes)),
                               "max_message_bytes": .int(Int64(mail.maxMessageBytes))])
        top["faults"] = .array(faults.map { .object($0.json) })
        return .object(top)
    }

    /// Pretty-printed JSON that `load(json:)` reads back to an equal scenario.
    package var prettyJSON: String { JSONWriter.pretty(json) }
}

extension Scenario.Team {
    var json: JSONValue {
        var object = JSONObject()
        object["team_id"] = .string(teamID)
        if kind != .organization { object["type"] = .string(kind.rawValue) }
        object["developer_keys"] = .array(developerKeys.map { key in
            var entry = JSONObject()
            entry["key_id"] = .string(key.keyID)
            entry["public_key"] = .string(key.publicKeyPEM)
            if let primary = key.primaryAppID { entry["primary_app_id"] = .string(primary) }
            if key.propagationSeconds > 0 { entry["propagation_seconds"] = .int(Int64(key.propagationSeconds)) }
            return .object(entry)
        })
        object["clients"] = .array(clients.map { client in
            var entry = JSONObject()
            entry["client_id"] = .string(client.clientID)
            entry["type"] = .string(client.kind.rawValue)
            entry["redirect_uris"] = .array(client.redirectURIs.map(JSONValue.string))
            entry["primary_app_id"] = client.primaryAppID.map(JSONValue.string) ?? .null
            entry["notification_url"] = client.notificationURL.map(JSONValue.string) ?? .null
            if client.propagationSeconds > 0 { entry["propagation_seconds"] = .int(Int64(client.propagationSeconds)) }
            return .object(entry)
        })
        object["notification_url"] = notificationURL.map(JSONValue.string) ?? .null
        // A domain that fails SPF is written as an object, the others as plain strings.
        let domains = emailSources.domains.map { domain -> JSONValue in
            emailSources.spfFailing.contains(domain) ? .object(["domain": .string(domain), "spf": "fail"]) : .string(domain)
        }
        object["email_sources"] = .object(["domains": .array(domains), "addresses": .array(emailSources.addresses.map(JSONValue.string))])
        return .object(object)
    }
}

extension Scenario.User {
    var json: JSONValue {
        var object = JSONObject()
        object["id"] = .string(id)
        if managed { object["managed"] = .bool(true) } else { object["email"] = .string(email) }
        object["given_name"] = .string(givenName)
        object["family_name"] = .string(familyName)
        object["hide_email"] = .bool(hideEmail)
        object["real_user_status"] = .int(Int64(realUserStatus))
        object["relay_domain"] = .string(relayDomain.rawValue)
        if omitsPrivateEmail { object["omit_is_private_email"] = .bool(true) }
        return .object(object)
    }
}
