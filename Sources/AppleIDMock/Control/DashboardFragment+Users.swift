import JOSE

extension DashboardFragment {
    /// What one user has at Apple, gathered in one pass over the world's consents, ended
    /// consents and transfers (never a lookup per user and app group).
    private struct Holdings {
        var live: [(key: Consent.Key, consent: Consent)] = []
        var ended: [(key: Consent.Key, how: Consent.Revocation)] = []
        var transferTeams: Set<String> = []
    }

    /// Users: identifiers per team, consent per app group, account and credential state, and
    /// the account events a user can cause at Apple.
    mutating func users() {
        let world = snapshot.world
        let shown = snapshot.users.count
        let summary = shown < snapshot.userCount
            ? "showing \(Self.count(shown)) of \(Self.count(snapshot.userCount)) users"
            : snapshot.userCount == 1 ? "1 user" : "\(Self.count(snapshot.userCount)) users"
        open("users", summary: summary)
        let holdings = gather(world)
        out.raw("<table class=\"grid users\"><thead><tr><th scope=\"col\">User</th><th scope=\"col\">Team · sub · relay address</th>")
        out.raw("<th scope=\"col\">Consent per app group</th><th scope=\"col\">Credential state per app</th><th scope=\"col\">Account</th></tr></thead><tbody>")
        for account in snapshot.users {
            row(account, holdings[account.user.id] ?? Holdings())
        }
        out.raw("\n</tbody></table></div>\n")
    }

    private func gather(_ world: World) -> [String: Holdings] {
        let everyone = snapshot.users.count == snapshot.userCount
        let listed = everyone ? [] : Set(snapshot.users.map(\.user.id))
        var holdings: [String: Holdings] = [:]
        for (key, consent) in world.consents where everyone || listed.contains(key.userID) {
            holdings[key.userID, default: Holdings()].live.append((key, consent))
        }
        for (key, how) in world.endedConsents where (everyone || listed.contains(key.userID)) && world.consents[key] == nil {
            holdings[key.userID, default: Holdings()].ended.append((key, how))
        }
        for transfer in world.transfers.values where everyone || listed.contains(transfer.userID) {
            holdings[transfer.userID, default: Holdings()].transferTeams.formUnion([transfer.fromTeam, transfer.toTeam])
        }
        // Dictionaries iterate in a different order in every process: sort for a byte-stable page.
        for id in holdings.keys {
            holdings[id]?.live.sort { ($0.key.teamID, $0.key.groupID) < ($1.key.teamID, $1.key.groupID) }
            holdings[id]?.ended.sort { ($0.key.teamID, $0.key.groupID) < ($1.key.teamID, $1.key.groupID) }
        }
        return holdings
    }

    private mutating func row(_ account: UserAccount, _ holdings: Holdings) {
        let user = account.user
        let manyTeams = directory.teams.count > 1
        out.raw("\n<tr id=\"user-")
        out.text(user.id)
        out.raw(account.deleted ? "\" class=\"deleted\"><th scope=\"row\">" : "\"><th scope=\"row\">")
        out.raw("<span class=\"mono strong\">")
        out.text(user.id)
        out.raw("</span><div class=\"name\">")
        out.text(user.givenName)
        out.raw(" ")
        out.text(user.familyName)
        out.raw("</div><div class=\"mono dim\">")
        out.text(user.email)
        out.raw("</div><div>")
        if account.addedAtRuntime { tag("runtime") }
        if user.hideEmail { tag("hides email") }
        switch user.realUserStatus {
        case 2: tag("likely real")
        case 1: tag("real user unknown", "warn")
        default: tag("real user unsupported", "warn")
        }
        out.raw("</div></th><td>")
        for (teamID, _) in directory.teams {
            out.raw("<div class=\"team\">")
            if manyTeams {
                out.raw("<span class=\"dim\">")
                out.text(teamID)
                out.raw("</span> ")
            }
            out.raw("<span class=\"mono\" title=\"sub\">")
            out.text(Identity.subject(teamID: teamID, userID: user.id))
            out.raw("</span><br><span class=\"mono\" title=\"relay address\">")
            out.text(Identity.relayAddress(teamID: teamID, user: user))
            out.raw("</span> ")
            if account.relayDisabledTeams.contains(teamID) {
                tag("relay off", "warn")
            } else {
                tag("forwarding", "ok")
            }
            out.raw("</div>")
        }
        out.raw("</td><td>")
        consents(account, holdings, manyTeams: manyTeams)
        out.raw("</td><td>")
        credentialStates(user.id, holdings)
        out.raw("</td><td>")
        if account.deleted {
            tag("deleted", "bad")
        } else {
            tag("active", "ok")
            out.raw(" ")
            action("Delete account", method: "POST", path: "/__mock/events",
                   body: ["type": "account-delete", "user": .string(user.id), "client_id": .string(directory.accountClient)],
                   test: "delete-" + user.id, confirm: "Delete the Apple Account of \(user.id)?",
                   kind: "danger small")
        }
        out.raw("</td></tr>")
    }

    private mutating func consents(_ account: UserAccount, _ holdings: Holdings, manyTeams: Bool) {
        let userID = account.user.id
        if holdings.live.isEmpty && holdings.ended.isEmpty {
            out.raw("<span class=\"dim\">none</span>")
            return
        }
        for (key, consent) in holdings.live {
            out.raw("<div class=\"consent\">")
            group(key, manyTeams: manyTeams)
            tag("granted", "ok")
            out.raw(" ")
            mockTime(consent.grantedAt)
            out.raw("<br><span class=\"dim\">scopes</span> ")
            out.text(consent.scopes.isEmpty ? "none" : consent.scopes.sorted().joined(separator: " "))
            out.raw(" · ")
            out.raw(consent.hideEmail ? "email hidden" : "email shared")
            if !account.deleted {
                out.raw(" ")
                action("Revoke consent", method: "POST", path: "/__mock/events",
                       body: ["type": "consent-revoked", "user": .string(userID), "client_id": .string(key.groupID)],
                       test: "revoke-" + userID + "-" + key.groupID, kind: "small")
                // Relay forwarding is the user's choice for an app group that got the relay address.
                if consent.hideEmail {
                    let forwarding = !account.relayDisabledTeams.contains(key.teamID)
                    let body: JSONObject = ["type": .string(forwarding ? "email-disabled" : "email-enabled"), "user": .string(userID),
                                            "client_id": .string(key.groupID)]
                    let test = (forwarding ? "relay-off-" : "relay-on-") + userID + "-" + key.groupID
                    out.raw(" ")
                    if forwarding {
                        action("Stop relay", method: "POST", path: "/__mock/events", body: body, test: test, kind: "secondary small")
                    } else {
                        action("Resume relay", method: "POST", path: "/__mock/events", body: body, test: test, kind: "secondary small")
                    }
                }
            }
            out.raw("</div>")
        }
        for (key, how) in holdings.ended {
            out.raw("<div class=\"consent\">")
            group(key, manyTeams: manyTeams)
            tag(how == .byUser ? "revoked by the user" : "revoked by the app", "bad")
            out.raw("</div>")
        }
    }

    private mutating func group(_ key: Consent.Key, manyTeams: Bool) {
        if manyTeams {
            out.raw("<span class=\"dim\">")
            out.text(key.teamID)
            out.raw("</span> ")
        }
        out.raw("<span class=\"mono strong\">")
        out.text(key.groupID)
        out.raw("</span> ")
    }

    /// What a device reports for the user in each app that could say anything but `notFound`:
    /// the apps of the groups the user consented to (or did), and of the teams a transfer touches.
    private mutating func credentialStates(_ userID: String, _ holdings: Holdings) {
        var clients: [String] = []
        var seen: Set<String> = []
        for key in holdings.live.map(\.key) + holdings.ended.map(\.key) {
            for client in directory.group(teamID: key.teamID, groupID: key.groupID)?.clientIDs ?? [] where seen.insert(client).inserted {
                clients.append(client)
            }
        }
        for teamID in holdings.transferTeams.sorted() {
            for client in directory.clients(ofTeam: teamID) where seen.insert(client).inserted { clients.append(client) }
        }
        let limit = 12
        for clientID in clients.prefix(limit) {
            guard let entry = snapshot.world.context.clients.entry(clientID) else { continue }
            let state = snapshot.world.credentialState(of: userID, for: entry, now: snapshot.now)
            out.raw("<div>")
            mono(clientID)
            out.raw(" ")
            switch state {
            case .authorized: tag(state.rawValue, "ok")
            case .revoked: tag(state.rawValue, "bad")
            case .transferred: tag(state.rawValue, "warn")
            case .notFound: tag(state.rawValue)
            }
            out.raw("</div>")
        }
        if clients.count > limit {
            out.raw("<div class=\"dim\">and ")
            out.number(clients.count - limit)
            out.raw(" more apps</div>")
        }
        if clients.isEmpty {
            out.raw("<span class=\"dim\">notFound in every app</span>")
        } else if clients.count < directory.clientIDs.count {
            out.raw("<div class=\"dim\">notFound in the other apps</div>")
        }
    }
}
