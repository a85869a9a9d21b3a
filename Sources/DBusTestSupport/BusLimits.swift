/// The resource limits of a private bus.
public struct BusLimits: Sendable, Hashable {
    /// Method calls a connection may have awaiting replies (system bus: 128).
    public var maxRepliesPerConnection = 128
    /// Match rules per connection (system bus: 512).
    public var maxMatchRulesPerConnection = 512
    /// Bytes queued towards or from one connection (system bus: 127 MiB).
    public var maxQueuedBytes = 133_169_152
    /// The largest message (system bus: 32 MiB).
    public var maxMessageSize = 33_554_432
    /// Connections one user may open (system bus: 256).
    public var maxConnectionsPerUser = 256
    /// Names one connection may own (system bus: 512).
    public var maxNamesPerConnection = 512
    /// How long the bus waits for a reply before sending NoReply itself, in ms (system bus: 25 s).
    public var replyTimeoutMilliseconds = 25_000

    /// The limits of a stock system bus (dbus-daemon's built-in defaults for `--system`).
    public static let systemBus = BusLimits()

    /// A `dbus-daemon` configuration listening on `socket`, with `policy` (allow-all by default).
    public func configuration(socket: String, policy: BusPolicy = .allowAll) -> String {
        """
        <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
        <busconfig>
          <type>custom</type>
          <listen>unix:path=\(socket)</listen>
          <auth>EXTERNAL</auth>
          <policy context="default">
            <allow user="*"/>
            <allow own="*"/>
            <allow send_destination="*" eavesdrop="true"/>
            <allow receive_sender="*"/>
            <allow eavesdrop="true"/>
        \(policy.rules)
          </policy>
          <limit name="max_replies_per_connection">\(maxRepliesPerConnection)</limit>
          <limit name="max_match_rules_per_connection">\(maxMatchRulesPerConnection)</limit>
          <limit name="max_incoming_bytes">\(maxQueuedBytes)</limit>
          <limit name="max_outgoing_bytes">\(maxQueuedBytes)</limit>
          <limit name="max_message_size">\(maxMessageSize)</limit>
          <limit name="max_connections_per_user">\(maxConnectionsPerUser)</limit>
          <limit name="max_names_per_connection">\(maxNamesPerConnection)</limit>
          <limit name="reply_timeout">\(replyTimeoutMilliseconds)</limit>
        </busconfig>
        """
    }
}
