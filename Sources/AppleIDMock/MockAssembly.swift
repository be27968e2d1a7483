import FoundationEssentials
import MiniHTTP
import Synchronization

/// A mock apart from its socket: the domain, the route table over it (control guard and request
/// log included), the notification deliverer the table's routes report to, and the ticker that
/// runs the scenario's rotation pattern and timeline on real time. `AppleIDMockServer` serves it
/// on a port and `InMemoryMock` answers requests with it directly; both build it here from one
/// configuration and end it with `finish()`, so the two run the same wiring.
final class MockAssembly: Sendable {
    /// The Apple domain: scenario, clock, keys and all state.
    let domain: AppleIDDomain
    /// The address clients use, known once the port is bound.
    let site: SiteAddress
    /// Server-to-server notifications: their delivery and log.
    let notifications: NotificationDeliverer
    /// Every route the mock serves.
    let routes: RouteTable
    /// The request journal; nil with `journal` off.
    let journal: RequestJournal?
    /// What the SMTP port received (empty while it serves none).
    let mailbox: MailBox
    /// Sends mail on to `--mail-forward`; nil without it.
    let mailForwarder: MailForwarder?
    /// The SMTP port's decisions.
    let mailHandler: RelayMailHandler
    /// With `--state`: the file the state is kept in.
    let stateFile: StateFile?
    /// With `--state`: commits what changes to the state file.
    let stateWriter: StateWriter?
    /// The once-a-second tick, while it runs.
    private let ticker = Mutex<Task<Void, Never>?>(nil)
    /// Set when the mock stops: a key catch-up on the work thread ends early.
    private let stopping = StopFlag()
    private let notificationGrace: Double
    private let log: @Sendable (String) -> Void
    /// Where MiniHTTP's own lines go (a handler's unknown error, a response refused, a failed
    /// accept or epoll call): the mock's log, at `error`, marked `MiniHTTP:`.
    let httpLog: @Sendable (String) -> Void

    /// Loads the keys and builds the domain, the deliverer (over `configuration`'s transport,
    /// else HTTP) and the route table; nothing runs yet but what the deliverer starts on demand.
    init(_ configuration: AppleIDMockConfiguration) throws(AppleIDMockError) {
        // With --state: the file is opened (and held) first; the domain starts from its record,
        // or a new file gets the domain's genesis before anything else is written.
        let file: StateFile?
        do {
            file = try configuration.statePath.map { path throws(StateFileError) in
                try StateFile(path: path, scenarioJSON: configuration.scenario.prettyJSON)
            }
        } catch {
            throw .state(error)
        }
        do {
            domain = try AppleIDDomain(configuration: configuration, restored: file?.stored, durable: file != nil)
        } catch {
            file?.close()
            throw error
        }
        if let file, file.stored == nil {
            do {
                try file.writeGenesis(domain.owner.genesis)
            } catch {
                file.close()
                throw .state(StateFileError(path: file.path, problem: .io(error.description)))
            }
        }
        stateFile = file
        site = SiteAddress()
        let transport = configuration.notificationTransport
            ?? HTTPNotificationTransport(caFile: configuration.notificationCAFile, connectTimeout: configuration.notificationConnectTimeout,
                                         responseTimeout: configuration.notificationResponseTimeout)
        // A restart rebuilds the delivery log from the state file's record before anything new comes.
        notifications = NotificationDeliverer(domain: domain, scenario: domain.scenario, issuer: domain.issuer, transport: transport,
                                              retryDelays: domain.scenario.compatibility.notificationRetryDelays, workers: 4,
                                              realTime: configuration.realTime, log: configuration.logger(.warn),
                                              restored: stateFile?.stored) { name, body in
            LoopThread.start(name: name, body)
        }
        let journal = configuration.journal ? RequestJournal(capacity: domain.scenario.journalCapacity, realTime: configuration.realTime) : nil
        let mailbox = MailBox(capacity: domain.scenario.mail.capacity, maxBytes: domain.scenario.mail.maxBytes)
        if let target = configuration.mailForward {
            guard let forwarder = MailForwarder(target: target, mailbox: mailbox, log: configuration.logger(.warn)) else {
                notifications.stopNow()
                stateFile?.close()
                throw .mailForward(target)
            }
            mailForwarder = forwarder
        } else {
            mailForwarder = nil
        }
        self.mailbox = mailbox
        mailHandler = RelayMailHandler(domain: domain, mailbox: mailbox, forwarder: mailForwarder, log: configuration.logger(.info))
        routes = Routes.table(domain: domain, site: site, control: Self.controlGuard(configuration), notifications: notifications,
                              requests: RequestLog(level: configuration.logLevel, sink: configuration.log, journal: journal != nil,
                                                  committing: stateFile == nil ? nil : domain.events.barrier), journal: journal,
                              mail: mailbox)
        journal?.attach(routes)
        self.journal = journal
        if let file {
            stateWriter = StateWriter(file: file, owner: domain.owner, log: configuration.logger(.error))
        } else {
            stateWriter = nil
        }
        notificationGrace = configuration.notificationShutdownGrace
        log = configuration.logger(.warn)
        let errors = configuration.logger(.error)
        httpLog = { errors("MiniHTTP: \($0)") }
    }

    /// Starts what runs while the mock serves: the state file's writer, when there is one.
    func startWriting() {
        stateWriter?.start()
    }

    /// Undoes a start that failed after this was built: the deliverer ends, and the state file
    /// (its writer never started) is closed here, so a retry can open it.
    func abandon() {
        notifications.stopNow()
        stateFile?.close()
    }

    /// Starts the tick when the scenario needs one (a rotation pattern or a timeline of events):
    /// once a second a running clock reaches the pattern's next step and the timeline's next event
    /// without anyone moving it. Key generation happens on the domain's work thread, off the I/O
    /// loops and off the cooperative pool.
    func startTicking() {
        guard domain.scenario.signingKeys.rotation != nil || !domain.scenario.events.isEmpty else { return }
        let task = Task.detached { [domain, stopping] in
            while !Task.isCancelled {
                await domain.blockingWork.run {
                    // On the work thread, Task.isCancelled says nothing: the mock's flag does.
                    domain.tick(stopping: { stopping.value.load(ordering: .relaxed) })
                }
                try? await Task.sleep(nanoseconds: 1_000_000_000)
            }
        }
        ticker.withLock { $0 = task }
    }

    /// Ends the tick; returns at once (a key being generated stops early).
    func stopTicking() {
        stopping.value.store(true, ordering: .relaxed)
        ticker.withLock { $0 }?.cancel()
    }

    /// Ends the mock's own work without blocking a thread: the tick (waiting for a key being
    /// generated), then queued notifications get their grace period, what is still undelivered is
    /// listed on the log, and the log is flushed. Nothing of the mock runs after it returns.
    func finish() async {
        stopTicking()
        domain.events.releaseReaders()
        journal?.releaseReaders()
        mailbox.releaseReaders()
        mailForwarder?.stop()
        notifications.releaseReaders()
        await ticker.withLock { $0 }?.value
        for record in await notifications.stop(grace: notificationGrace) {
            log("notification \(record.id) (\(record.type) for \(record.userID)) to \(record.url ?? "-") undelivered after \(record.attempts.count) attempts"
                + (stateWriter == nil ? "" : "; the state file keeps it for the next start"))
        }
        await stateWriter?.stop()
        await AppleIDMockLog.flush()
    }

    /// The control API's guard: IP literals, localhost, the configured names and the host of the base URL.
    static func controlGuard(_ configuration: AppleIDMockConfiguration) -> ControlGuard {
        var names = configuration.allowedHosts
        if let base = configuration.baseURL, let host = URL(string: base)?.host { names.append(host) }
        return ControlGuard(allowedHosts: names, token: configuration.controlToken)
    }
}
