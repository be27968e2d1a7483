import JOSE

extension AuthorizationGrant: StoredCodable {
    /// `{"client_id", "redirect_uri" | null, "consent_id", "team_id", "user_id", "nonce" | null, "code_challenge" | null,
    /// "code_challenge_method" | null, "auth_time", "expires_at", "flow": "web" | "native", "first_authorization", "defect" | null}`.
    var stored: JSONValue {
        var object = JSONObject()
        object["client_id"] = .string(clientID)
        object["redirect_uri"] = .optional(redirectURI)
        object["consent_id"] = .int(Int64(consentID))
        object["team_id"] = .string(teamID)
        object["user_id"] = .string(userID)
        object["nonce"] = .optional(nonce)
        object["code_challenge"] = .optional(codeChallenge)
        object["code_challenge_method"] = .optional(codeChallengeMethod)
        object["auth_time"] = .int(authTime)
        object["expires_at"] = .int(expiresAt)
        object["flow"] = .string(flow == .web ? "web" : "native")
        object["first_authorization"] = .bool(isFirstAuthorization)
        object["defect"] = .optional(defect?.rawValue)
        return .object(object)
    }

    /// Reads `stored`.
    init(stored: JSONValue, path: String) throws(StoredStateError) {
        var reader = try StoredReader(stored, path: path)
        self.init(clientID: try reader.string("client_id"), redirectURI: try reader.optionalString("redirect_uri"),
                  consentID: try reader.uint32("consent_id"), teamID: try reader.string("team_id"), userID: try reader.string("user_id"),
                  nonce: try reader.optionalString("nonce"), codeChallenge: try reader.optionalString("code_challenge"),
                  codeChallengeMethod: try reader.optionalString("code_challenge_method"), authTime: try reader.int64("auth_time", in: StoredRange.seconds),
                  expiresAt: try reader.int64("expires_at", in: StoredRange.seconds), flow: try reader.choice("flow", ["web": Flow.web, "native": Flow.native]),
                  isFirstAuthorization: try reader.bool("first_authorization"), defect: try reader.optionalChoice("defect", TokenDefect.allCases))
        try reader.finish()
    }
}
