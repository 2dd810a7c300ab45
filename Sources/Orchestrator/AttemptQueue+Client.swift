import Coordinator
import Store

/// The PostgreSQL queue is the coordinator's queue.
extension AttemptQueue: AttemptQueueClient {
    package var patience: Duration { Database.defaultConnectTimeout }

    package func describe(_ error: any Error) -> String { Database.describe(error) }
}
