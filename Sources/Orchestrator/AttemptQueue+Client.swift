import Coordinator
import Store

/// The PostgreSQL queue is the coordinator's queue.
extension AttemptQueue: AttemptQueueClient {}
