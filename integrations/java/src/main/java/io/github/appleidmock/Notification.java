package io.github.appleidmock;

import java.util.Map;

/** One verified server-to-server notification: its events claim's type and sub, and the rest. */
public record Notification(String type, String sub, Map<String, Object> events, Map<String, Object> claims, String kid, String token) {}
