/// The SQL of each migration. Never edit a released one: add the next.

enum Schema {
    static let version1 = """
        CREATE TABLE runs (
            id uuid PRIMARY KEY,
            created_at timestamptz NOT NULL DEFAULT now(),
            finished_at timestamptz,
            state text NOT NULL CHECK (state IN ('running', 'finished', 'interrupted')),
            host text NOT NULL,
            git_revision text,
            working_directory text NOT NULL,
            config_path text,
            mode text NOT NULL,
            workers integer NOT NULL,
            retries integer NOT NULL,
            scenario_count integer NOT NULL
        );
        CREATE INDEX runs_created_at ON runs (created_at DESC);
        CREATE TABLE scenarios (
            id text PRIMARY KEY,
            name text NOT NULL,
            uri text,
            line integer,
            tags text[] NOT NULL DEFAULT '{}',
            first_seen timestamptz NOT NULL DEFAULT now(),
            last_seen timestamptz NOT NULL DEFAULT now()
        );
        CREATE TABLE run_scenarios (
            run_id uuid NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
            scenario_id text NOT NULL REFERENCES scenarios (id),
            position integer NOT NULL,
            command text NOT NULL,
            timeout_ms bigint NOT NULL,
            env jsonb NOT NULL DEFAULT '{}',
            tags text[] NOT NULL DEFAULT '{}',
            expected_ms bigint,
            max_attempts integer NOT NULL,
            result text CHECK (result IN ('passed', 'flaky', 'failed')),
            PRIMARY KEY (run_id, scenario_id)
        );
        CREATE TABLE attempts (
            id bigserial PRIMARY KEY,
            run_id uuid NOT NULL,
            scenario_id text NOT NULL,
            attempt integer NOT NULL,
            state text NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'running', 'finished')),
            expected_ms bigint,
            avoid_worker text,
            avoid_until timestamptz,
            lease_owner text,
            lease_token uuid,
            lease_expires_at timestamptz,
            requeues integer NOT NULL DEFAULT 0,
            worker text,
            host text,
            port integer,
            pid integer,
            started_at timestamptz,
            finished_at timestamptz,
            duration_ms bigint,
            outcome text CHECK (outcome IN ('passed', 'failed', 'timed-out', 'crashed', 'infrastructure-error')),
            exit_code integer,
            signal integer,
            stdout text NOT NULL DEFAULT '',
            stderr text NOT NULL DEFAULT '',
            error text,
            FOREIGN KEY (run_id, scenario_id) REFERENCES run_scenarios (run_id, scenario_id) ON DELETE CASCADE,
            UNIQUE (run_id, scenario_id, attempt)
        );
        CREATE INDEX attempts_claimable ON attempts (run_id, expected_ms DESC NULLS FIRST, id) WHERE state = 'queued';
        CREATE INDEX attempts_leases ON attempts (run_id, lease_expires_at) WHERE state = 'running';
        CREATE INDEX attempts_passed_history ON attempts (scenario_id, finished_at DESC) WHERE outcome = 'passed';
        CREATE INDEX attempts_scenario_history ON attempts (scenario_id, finished_at DESC);
        CREATE TABLE steps (
            id bigserial PRIMARY KEY,
            attempt_id bigint NOT NULL REFERENCES attempts (id) ON DELETE CASCADE,
            position integer NOT NULL,
            keyword text NOT NULL DEFAULT '',
            name text NOT NULL,
            status text NOT NULL,
            started_at timestamptz NOT NULL,
            finished_at timestamptz,
            error text
        );
        CREATE INDEX steps_attempt ON steps (attempt_id, position);
        CREATE TABLE exchanges (
            id bigserial PRIMARY KEY,
            attempt_id bigint NOT NULL REFERENCES attempts (id) ON DELETE CASCADE,
            step_id bigint REFERENCES steps (id) ON DELETE SET NULL,
            sequence integer NOT NULL,
            mode text NOT NULL,
            matched boolean NOT NULL,
            host text NOT NULL,
            method text NOT NULL,
            url text NOT NULL,
            request_headers jsonb NOT NULL DEFAULT '[]',
            request_body bytea,
            status integer,
            response_headers jsonb NOT NULL DEFAULT '[]',
            response_body bytea,
            started_at timestamptz NOT NULL,
            duration_us bigint
        );
        CREATE INDEX exchanges_attempt ON exchanges (attempt_id, sequence);
        CREATE INDEX exchanges_step ON exchanges (step_id)
        """

    /// The planner's median of the last 20 passes reads each scenario's newest passes from the index
    /// alone, however long the history (the index it replaces made it visit one heap page per pass);
    /// vacuuming the queue table sooner keeps those pages marked all-visible.
    static let version2 = """
        CREATE INDEX attempts_passed_recent ON attempts (scenario_id, finished_at DESC) INCLUDE (duration_ms)
            WHERE outcome = 'passed';
        DROP INDEX attempts_passed_history;
        ALTER TABLE attempts SET (autovacuum_vacuum_scale_factor = 0.05, autovacuum_vacuum_insert_scale_factor = 0.05)
        """

    /// A near miss, a refused host, an upstream error: said with the exchange.
    static let version3 = """
        ALTER TABLE exchanges ADD COLUMN note text
        """

    /// Exchanges and steps reach the database in separate batches, in any order: an exchange names
    /// the step it happened in by the step's position in the attempt.
    static let version4 = """
        ALTER TABLE exchanges DROP COLUMN step_id;
        ALTER TABLE exchanges ADD COLUMN step_position integer;
        DROP INDEX steps_attempt;
        CREATE UNIQUE INDEX steps_attempt_position ON steps (attempt_id, position)
        """

    /// Payloads (bodies and header lists) are stored once, by SHA-256 of their (redacted) bytes: a replayed
    /// response is the same body and headers thousands of times, and an app sends the same headers with
    /// most requests. Exchanges name them by digest (NULL when empty); `exchange_log` reads them back
    /// joined, headers as jsonb. The foreign key from exchanges to attempts goes: checking it is a lookup per
    /// logged row, a large part of PostgreSQL's work on the network log, and the writer only logs
    /// exchanges of attempts it was given (deleting attempts deletes their exchanges explicitly).
    static let version5 = """
        ALTER TABLE exchanges DROP CONSTRAINT exchanges_attempt_id_fkey;
        CREATE TABLE payloads (
            digest bytea PRIMARY KEY,
            content bytea NOT NULL
        );
        ALTER TABLE exchanges
            ADD COLUMN request_headers_digest bytea, ADD COLUMN request_body_digest bytea,
            ADD COLUMN response_headers_digest bytea, ADD COLUMN response_body_digest bytea;
        UPDATE exchanges SET
            request_headers_digest = CASE WHEN request_headers <> '[]' THEN sha256(convert_to(request_headers::text, 'UTF8')) END,
            request_body_digest = CASE WHEN length(request_body) > 0 THEN sha256(request_body) END,
            response_headers_digest = CASE WHEN response_headers <> '[]' THEN sha256(convert_to(response_headers::text, 'UTF8')) END,
            response_body_digest = CASE WHEN length(response_body) > 0 THEN sha256(response_body) END;
        INSERT INTO payloads (digest, content)
            SELECT DISTINCT ON (digest) digest, content FROM (
                SELECT request_headers_digest AS digest, convert_to(request_headers::text, 'UTF8') AS content FROM exchanges
                UNION ALL SELECT request_body_digest, request_body FROM exchanges
                UNION ALL SELECT response_headers_digest, convert_to(response_headers::text, 'UTF8') FROM exchanges
                UNION ALL SELECT response_body_digest, response_body FROM exchanges
            ) AS all_payloads
            WHERE digest IS NOT NULL;
        ALTER TABLE exchanges DROP COLUMN request_headers, DROP COLUMN request_body,
            DROP COLUMN response_headers, DROP COLUMN response_body;
        CREATE VIEW exchange_log AS
            SELECT exchanges.*,
                   coalesce(convert_from(request_headers.content, 'UTF8')::jsonb, '[]') AS request_headers,
                   coalesce(request_body.content, ''::bytea) AS request_body,
                   coalesce(convert_from(response_headers.content, 'UTF8')::jsonb, '[]') AS response_headers,
                   coalesce(response_body.content, ''::bytea) AS response_body
            FROM exchanges
            LEFT JOIN payloads AS request_headers ON request_headers.digest = exchanges.request_headers_digest
            LEFT JOIN payloads AS request_body ON request_body.digest = exchanges.request_body_digest
            LEFT JOIN payloads AS response_headers ON response_headers.digest = exchanges.response_headers_digest
            LEFT JOIN payloads AS response_body ON response_body.digest = exchanges.response_body_digest
        """

    /// `exchange_log.step`: the step an exchange happened in — the one open when it arrived (named by the
    /// control API), else, for steps a test reported afterwards in Cucumber reports, the latest step whose time
    /// span holds the exchange's start.
    static let version6 = exchangeLogView

    /// The network log read back: exchanges with their payloads joined and the step each happened in.
    static let exchangeLogView = """
        CREATE OR REPLACE VIEW exchange_log AS
            SELECT exchanges.*,
                   coalesce(convert_from(request_headers.content, 'UTF8')::jsonb, '[]') AS request_headers,
                   coalesce(request_body.content, ''::bytea) AS request_body,
                   coalesce(convert_from(response_headers.content, 'UTF8')::jsonb, '[]') AS response_headers,
                   coalesce(response_body.content, ''::bytea) AS response_body,
                   coalesce(exchanges.step_position, (
                       SELECT steps.position FROM steps
                       WHERE steps.attempt_id = exchanges.attempt_id AND steps.started_at <= exchanges.started_at
                         AND exchanges.started_at <= coalesce(steps.finished_at, 'infinity')
                       ORDER BY steps.position DESC LIMIT 1)) AS step
            FROM exchanges
            LEFT JOIN payloads AS request_headers ON request_headers.digest = exchanges.request_headers_digest
            LEFT JOIN payloads AS request_body ON request_body.digest = exchanges.request_body_digest
            LEFT JOIN payloads AS response_headers ON response_headers.digest = exchanges.response_headers_digest
            LEFT JOIN payloads AS response_body ON response_body.digest = exchanges.response_body_digest
        """

    /// Compare runs: a scenario runs in lanes (its replay and its live attempts, `attempts.mode`; NULL is the run's
    /// mode), each retried on its own, and settles when every lane has (`run_scenarios.lanes`, lane → result;
    /// left empty in single-lane runs, whose one lane settles the scenario).
    /// Verdicts with their reason and evidence (network differences) per scenario and run; quarantine.
    static let version7 = """
        ALTER TABLE attempts ADD COLUMN mode text;
        ALTER TABLE attempts DROP CONSTRAINT attempts_run_id_scenario_id_attempt_key;
        CREATE UNIQUE INDEX attempts_lane_attempt ON attempts (run_id, scenario_id, coalesce(mode, ''), attempt);
        CREATE INDEX attempts_finished ON attempts (finished_at DESC) INCLUDE (scenario_id) WHERE state = 'finished';
        ALTER TABLE run_scenarios
            ADD COLUMN lane_count integer NOT NULL DEFAULT 1,
            ADD COLUMN lanes jsonb NOT NULL DEFAULT '{}',
            ADD COLUMN quarantined boolean NOT NULL DEFAULT false,
            ADD COLUMN verdict text CHECK (verdict IN ('stable', 'failing', 'drift', 'stale-recording', 'nondeterministic')),
            ADD COLUMN verdict_reason text,
            ADD COLUMN evidence jsonb NOT NULL DEFAULT '[]';
        UPDATE run_scenarios SET lanes = jsonb_build_object('', result) WHERE result IS NOT NULL;
        CREATE INDEX run_scenarios_scenario ON run_scenarios (scenario_id);
        CREATE TABLE quarantine (
            scenario_id text PRIMARY KEY REFERENCES scenarios (id) ON DELETE CASCADE,
            reason text NOT NULL,
            automatic boolean NOT NULL,
            score double precision,
            added_at timestamptz NOT NULL DEFAULT now()
        )
        """

    /// A scenario's finished attempts, newest first, in one index that also answers the planner's median of recent
    /// passes from the index alone: every attempt's state change wrote an entry into each index, so two indexes over
    /// (scenario, finished time) — one of them holding queued and running attempts too — made many of the queue's
    /// index writes.
    static let version8 = """
        DROP INDEX attempts_passed_recent;
        DROP INDEX attempts_scenario_history;
        CREATE INDEX attempts_scenario_history ON attempts (scenario_id, finished_at DESC) INCLUDE (outcome, duration_ms)
            WHERE outcome IS NOT NULL
        """

    /// The attempts of a run that did not pass, for judging: the lane history is read only for scenarios that have one
    /// (``RunStore/laneHistory(of:limit:runs:)``). Passing attempts get no entry, so the queue hardly pays for it.
    static let version9 = """
        CREATE INDEX attempts_run_failures ON attempts (run_id) INCLUDE (scenario_id) WHERE outcome <> 'passed'
        """

    /// Exchanges lose their serial id, which nothing reads (they are found by attempt and sequence): drawing it from
    /// its sequence and keeping its primary key is work for PostgreSQL on every logged exchange. The view is built
    /// again without it.
    static let version10 = """
        DROP VIEW exchange_log;
        ALTER TABLE exchanges DROP COLUMN id;
        \(exchangeLogView)
        """

    /// An attempt given back unfinished (a lost worker, a stop) is kept as `abandoned` and followed by a new row with
    /// the same number, so that the exchanges and steps of two executions never share an attempt: attempt numbers are
    /// unique among the rows that are not abandoned.
    static let version11 = """
        ALTER TABLE attempts DROP CONSTRAINT attempts_state_check;
        ALTER TABLE attempts ADD CONSTRAINT attempts_state_check CHECK (state IN ('queued', 'running', 'finished', 'abandoned'));
        DROP INDEX attempts_lane_attempt;
        CREATE UNIQUE INDEX attempts_lane_attempt ON attempts (run_id, scenario_id, coalesce(mode, ''), attempt) WHERE state <> 'abandoned'
        """

    /// Runs that many hosts join: a run planned under a join key (unique: the first node to arrive plans it), a node's
    /// re-run (a run of its own, `parent_run_id`), who judged it and the exit code it judged; the processes that worked
    /// it (`run_members`: host, node, slots); per attempt the hosts it was lost on (its lease expired) and a late
    /// completion that its lease's fence turned away; and the files attempts kept (`attempt_files`, gzip, capped per
    /// attempt: past the cap only name and size), readable from any host.
    static let version12 = """
        ALTER TABLE runs
            ADD COLUMN join_key text,
            ADD COLUMN parent_run_id uuid REFERENCES runs (id) ON DELETE SET NULL,
            ADD COLUMN node text,
            ADD COLUMN judged_by text,
            ADD COLUMN judged_at timestamptz,
            ADD COLUMN exit_code integer,
            ADD COLUMN project text;
        CREATE UNIQUE INDEX runs_join_key ON runs (join_key) WHERE join_key IS NOT NULL;
        CREATE INDEX runs_parent ON runs (parent_run_id) WHERE parent_run_id IS NOT NULL;
        CREATE TABLE run_members (
            run_id uuid NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
            member text NOT NULL,
            host text NOT NULL,
            node text NOT NULL,
            workers integer NOT NULL,
            joined_at timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (run_id, member)
        );
        ALTER TABLE attempts
            ADD COLUMN lost_hosts text[] NOT NULL DEFAULT '{}',
            ADD COLUMN fenced jsonb;
        CREATE TABLE attempt_files (
            attempt_id bigint NOT NULL REFERENCES attempts (id) ON DELETE CASCADE,
            path text NOT NULL,
            bytes bigint NOT NULL,
            content bytea,
            PRIMARY KEY (attempt_id, path)
        )
        """

    /// Projects: several suites share one database. A scenario is its project's (`scenarios`, `run_scenarios`,
    /// `quarantine` and — for its history index — `attempts` carry the project); runs record their branch. Existing
    /// rows belong to the project of their run's folder name (what `project:` defaults to); a scenario id that runs of
    /// several projects planned becomes one scenario per project.
    static let version13 = """
        UPDATE runs SET project = coalesce(nullif(regexp_replace(rtrim(working_directory, '/'), '^.*/', ''), ''), 'default')
            WHERE project IS NULL;
        ALTER TABLE runs ALTER COLUMN project SET NOT NULL, ADD COLUMN branch text;
        CREATE INDEX runs_project ON runs (project, created_at DESC);
        ALTER TABLE run_scenarios DROP CONSTRAINT run_scenarios_scenario_id_fkey;
        ALTER TABLE quarantine DROP CONSTRAINT quarantine_scenario_id_fkey, DROP CONSTRAINT quarantine_pkey, ADD COLUMN project text;
        ALTER TABLE scenarios DROP CONSTRAINT scenarios_pkey, ADD COLUMN project text;
        INSERT INTO scenarios (project, id, name, uri, line, tags, first_seen, last_seen)
            SELECT p.project, s.id, s.name, s.uri, s.line, s.tags, s.first_seen, s.last_seen
            FROM scenarios s
            JOIN (SELECT DISTINCT r.project, rs.scenario_id FROM run_scenarios rs JOIN runs r ON r.id = rs.run_id) p ON p.scenario_id = s.id
            WHERE s.project IS NULL;
        INSERT INTO quarantine (project, scenario_id, reason, automatic, score, added_at)
            SELECT s.project, q.scenario_id, q.reason, q.automatic, q.score, q.added_at
            FROM quarantine q JOIN scenarios s ON s.id = q.scenario_id AND s.project IS NOT NULL
            WHERE q.project IS NULL;
        DELETE FROM quarantine WHERE project IS NULL;
        DELETE FROM scenarios WHERE project IS NULL;
        ALTER TABLE scenarios ALTER COLUMN project SET NOT NULL, ADD PRIMARY KEY (project, id);
        ALTER TABLE quarantine ALTER COLUMN project SET NOT NULL, ADD PRIMARY KEY (project, scenario_id),
            ADD FOREIGN KEY (project, scenario_id) REFERENCES scenarios (project, id) ON DELETE CASCADE;
        ALTER TABLE run_scenarios ADD COLUMN project text;
        UPDATE run_scenarios rs SET project = r.project FROM runs r WHERE r.id = rs.run_id;
        ALTER TABLE run_scenarios ALTER COLUMN project SET NOT NULL,
            ADD FOREIGN KEY (project, scenario_id) REFERENCES scenarios (project, id);
        DROP INDEX run_scenarios_scenario;
        CREATE INDEX run_scenarios_scenario ON run_scenarios (project, scenario_id);
        ALTER TABLE attempts ADD COLUMN project text;
        UPDATE attempts a SET project = r.project FROM runs r WHERE r.id = a.run_id;
        UPDATE attempts SET project = 'default' WHERE project IS NULL;
        ALTER TABLE attempts ALTER COLUMN project SET NOT NULL;
        DROP INDEX attempts_scenario_history;
        CREATE INDEX attempts_scenario_history ON attempts (project, scenario_id, finished_at DESC) INCLUDE (outcome, duration_ms)
            WHERE outcome IS NOT NULL
        """

    /// Stable views for dashboards (Dashboards/grafana): their queries read these, never the tables, so that a change
    /// of the schema changes a view, not every dashboard. Each carries the project and the branch to filter by.
    static let version14 = """
        CREATE VIEW dash_runs AS
        SELECT r.id AS run_id, r.project, coalesce(r.branch, '') AS branch, r.created_at AS started_at, r.finished_at, r.state, r.mode,
               r.git_revision, r.exit_code, extract(epoch FROM r.finished_at - r.created_at)::float8 AS duration_s,
               r.scenario_count AS scenarios, c.passed, c.flaky, c.failed, c.quarantined_failures,
               m.hosts, m.slots, w.busy_ms, w.longest_ms,
               -- The best possible schedule: the work spread evenly over the slots, or the longest attempt.
               (greatest(w.busy_ms::float8 / greatest(m.slots, 1), w.longest_ms::float8) / 1000)::float8 AS best_s
        FROM runs r,
        LATERAL (SELECT count(*) FILTER (WHERE rs.result = 'passed') AS passed, count(*) FILTER (WHERE rs.result = 'flaky') AS flaky,
                        count(*) FILTER (WHERE rs.result = 'failed') AS failed,
                        count(*) FILTER (WHERE rs.result = 'failed' AND rs.quarantined) AS quarantined_failures
                 FROM run_scenarios rs WHERE rs.run_id = r.id) c,
        LATERAL (SELECT count(DISTINCT host) AS hosts, coalesce(sum(workers), 0)::bigint AS slots FROM run_members WHERE run_id = r.id) m,
        LATERAL (SELECT coalesce(sum(duration_ms), 0)::bigint AS busy_ms, coalesce(max(duration_ms), 0)::bigint AS longest_ms
                 FROM attempts a WHERE a.run_id = r.id AND a.state = 'finished') w;
        CREATE VIEW dash_scenario_runs AS
        SELECT rs.run_id, rs.project, coalesce(r.branch, '') AS branch, r.created_at AS started_at, rs.scenario_id, rs.result, rs.verdict,
               rs.verdict_reason, rs.quarantined, rs.expected_ms, rs.evidence
        FROM run_scenarios rs JOIN runs r ON r.id = rs.run_id;
        CREATE VIEW dash_attempts AS
        SELECT a.id AS attempt_id, a.run_id, a.project, coalesce(r.branch, '') AS branch, a.scenario_id, a.attempt, a.state, a.outcome,
               coalesce(a.mode, r.mode) AS mode, CASE WHEN coalesce(a.mode, r.mode) IN ('live', 'record') THEN 'live' ELSE 'replay' END AS backend,
               a.started_at, a.finished_at, a.duration_ms, a.host, nullif(split_part(a.worker, '/', 3), '')::integer AS slot,
               (extract(epoch FROM a.started_at - r.created_at) * 1000)::float8 AS wait_ms
        FROM attempts a JOIN runs r ON r.id = a.run_id
        WHERE a.state <> 'abandoned';
        CREATE VIEW dash_exchanges AS
        SELECT e.attempt_id, a.project, coalesce(r.branch, '') AS branch, e.started_at, e.mode, e.host, e.method,
               e.host || split_part(split_part(e.url, '?', 1), e.host, 2) AS endpoint, e.status, e.duration_us, e.matched, e.note
        FROM exchanges e JOIN attempts a ON a.id = e.attempt_id JOIN runs r ON r.id = a.run_id;
        CREATE VIEW dash_quarantine AS
        SELECT project, scenario_id, reason, automatic, score, added_at FROM quarantine
        """

    /// Rollups that keep history queries short over long windows (`orchestrate flaky`, the dashboards):
    /// - `scenario_days`: per scenario, UTC day, branch, git revision and kind of backend, the finished attempts,
    ///   passes, consecutive pairs and flips within the day, and the first and last outcome (so that pairs across days
    ///   can be told from the days alone). A run's scenario-days are counted again from `attempts` when it settles: by
    ///   its judge (``RunStore/rollUp(_:)``, while it writes the reports), or by the trigger `runs_settled` when a run
    ///   stops otherwise (interrupted). Idempotent, so runs that settle in any order, or twice, leave the same rows.
    /// - `endpoint_days`: per UTC day, branch and endpoint, requests, errors and replay misses, by latency bucket (64
    ///   buckets a tenth of a decade wide from 50 µs, so a percentile read from them is within 26%); added to by every
    ///   statement that stores exchanges (`exchanges_added`), however late they arrive.
    ///
    /// The dashboards read them through `dash_scenario_days` and `dash_endpoint_days` (with each bucket's bounds).
    static let version15 = """
        CREATE TABLE scenario_days (
            project text NOT NULL,
            scenario_id text NOT NULL,
            branch text NOT NULL,
            git_revision text NOT NULL,
            live boolean NOT NULL,
            day date NOT NULL,
            attempts integer NOT NULL,
            passes integer NOT NULL,
            transitions integer NOT NULL,
            flips integer NOT NULL,
            first_passed boolean NOT NULL,
            last_passed boolean NOT NULL,
            PRIMARY KEY (project, day, scenario_id, branch, git_revision, live)
        ) WITH (fillfactor = 70);
        CREATE TABLE endpoint_days (
            project text NOT NULL,
            branch text NOT NULL,
            day date NOT NULL,
            method text NOT NULL,
            endpoint text NOT NULL,
            bucket smallint NOT NULL,
            requests bigint NOT NULL,
            errors bigint NOT NULL,
            misses bigint NOT NULL,
            PRIMARY KEY (project, day, branch, method, endpoint, bucket)
        );
        CREATE FUNCTION orchestrate_latency_bucket(duration_us bigint) RETURNS smallint LANGUAGE sql IMMUTABLE AS $$
            SELECT CASE WHEN duration_us IS NULL THEN -1
                        ELSE least(63, greatest(0, ceil(10 * log(greatest(duration_us, 1)::float8 / 50))))::smallint END
        $$;
        CREATE FUNCTION orchestrate_roll_up_days(keys_project text[], keys_scenario text[], keys_day date[]) RETURNS void LANGUAGE plpgsql AS $f$
        BEGIN
            -- The days of the keys given (a range of an index per key), or without keys every finished attempt in one pass.
            EXECUTE format($q$
            INSERT INTO scenario_days AS d (project, scenario_id, branch, git_revision, live, day, attempts, passes, transitions, flips,
                                            first_passed, last_passed)
            SELECT project, scenario_id, branch, git_revision, live, day, count(*), count(*) FILTER (WHERE passed), count(previous),
                   count(*) FILTER (WHERE previous <> passed), bool_or(passed) FILTER (WHERE position = 1),
                   bool_or(passed) FILTER (WHERE position = size)
            FROM (
                SELECT *, lag(passed) OVER w AS previous, row_number() OVER w AS position,
                       count(*) OVER (PARTITION BY project, scenario_id, branch, git_revision, live, day) AS size
                FROM (SELECT k.project, k.scenario_id, k.day, coalesce(r.branch, '') AS branch, coalesce(r.git_revision, '') AS git_revision,
                             coalesce(a.mode, r.mode) IN ('live', 'record') AS live, a.outcome = 'passed' AS passed, a.finished_at, a.id
                      FROM %s
                      JOIN runs r ON r.id = a.run_id
                      WHERE a.state = 'finished' AND a.outcome IS NOT NULL) t
                WINDOW w AS (PARTITION BY project, scenario_id, branch, git_revision, live, day ORDER BY finished_at, id)
            ) x
            GROUP BY project, scenario_id, branch, git_revision, live, day
            ORDER BY project, day, scenario_id, branch, git_revision, live
            ON CONFLICT (project, day, scenario_id, branch, git_revision, live) DO UPDATE SET
                attempts = excluded.attempts, passes = excluded.passes, transitions = excluded.transitions, flips = excluded.flips,
                first_passed = excluded.first_passed, last_passed = excluded.last_passed
            $q$, CASE WHEN keys_project IS NULL
                      THEN $s$attempts a CROSS JOIN LATERAL (SELECT a.project, a.scenario_id, (a.finished_at AT TIME ZONE 'UTC')::date) AS k(project, scenario_id, day)$s$
                      ELSE $s$unnest($1, $2, $3) AS k(project, scenario_id, day)
                             JOIN attempts a ON a.project = k.project AND a.scenario_id = k.scenario_id
                              AND a.finished_at >= k.day::timestamp AT TIME ZONE 'UTC' AND a.finished_at < (k.day + 1)::timestamp AT TIME ZONE 'UTC'$s$ END)
            USING keys_project, keys_scenario, keys_day;
        END
        $f$;
        CREATE FUNCTION orchestrate_exchanges_added() RETURNS trigger LANGUAGE plpgsql AS $f$
        BEGIN
            INSERT INTO endpoint_days AS d (project, branch, day, method, endpoint, bucket, requests, errors, misses)
            \(endpointTally(from: "added"))
            ORDER BY 1, 3, 2, 4, 5, 6
            ON CONFLICT (project, day, branch, method, endpoint, bucket) DO UPDATE SET
                requests = d.requests + excluded.requests, errors = d.errors + excluded.errors, misses = d.misses + excluded.misses;
            RETURN NULL;
        END
        $f$;
        CREATE TRIGGER exchanges_added AFTER INSERT ON exchanges REFERENCING NEW TABLE AS added FOR EACH STATEMENT
            EXECUTE FUNCTION orchestrate_exchanges_added();
        CREATE FUNCTION orchestrate_roll_up_run(settled uuid) RETURNS void LANGUAGE sql AS $$
            SELECT orchestrate_roll_up_days(array_agg(project), array_agg(scenario_id), array_agg(day))
            FROM (SELECT DISTINCT project, scenario_id, (finished_at AT TIME ZONE 'UTC')::date AS day FROM attempts
                  WHERE run_id = settled AND state = 'finished' AND outcome IS NOT NULL) k
        $$;
        CREATE FUNCTION orchestrate_run_settled() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            PERFORM orchestrate_roll_up_run(NEW.id);
            RETURN NULL;
        END
        $$;
        CREATE TRIGGER runs_settled AFTER UPDATE OF state ON runs FOR EACH ROW
            WHEN (NEW.state <> 'running' AND OLD.state IS DISTINCT FROM NEW.state AND NEW.judged_by IS NULL)
            EXECUTE FUNCTION orchestrate_run_settled();
        SELECT orchestrate_roll_up_days(NULL, NULL, NULL);
        INSERT INTO endpoint_days (project, branch, day, method, endpoint, bucket, requests, errors, misses)
        \(endpointTally(from: "exchanges"));
        CREATE VIEW dash_scenario_days AS
        SELECT project, branch, day, scenario_id, git_revision, CASE WHEN live THEN 'live' ELSE 'replay' END AS backend, attempts, passes,
               transitions, flips, first_passed, last_passed
        FROM scenario_days;
        CREATE VIEW dash_endpoint_days AS
        SELECT project, branch, day, method, endpoint, bucket,
               CASE WHEN bucket > 0 THEN 50 * 10::float8 ^ ((bucket - 1) / 10.0::float8) WHEN bucket = 0 THEN 0 END AS lower_us,
               CASE WHEN bucket >= 0 THEN 50 * 10::float8 ^ (bucket / 10.0::float8) END AS upper_us, requests, errors, misses
        FROM endpoint_days
        """

    /// Version 16: a planned scenario's results format and batch (a JSON ``Batch``: the command template and its
    /// bounds); an attempt that must run alone (`solo`: it was in a batch whose process ended before reporting it); an
    /// extra run of a new test (`probe`, `run --detect-new-flakes`), which neither settles its scenario nor is retried.
    static let version16 = """
        ALTER TABLE run_scenarios ADD COLUMN results text, ADD COLUMN batch jsonb;
        ALTER TABLE attempts ADD COLUMN solo boolean NOT NULL DEFAULT false, ADD COLUMN probe boolean NOT NULL DEFAULT false
        """

    /// Version 17: how many files an attempt left that were not recorded at all (past ``KeptFiles/maximumFiles``).
    static let version17 = """
        ALTER TABLE attempts ADD COLUMN files_left_out integer NOT NULL DEFAULT 0
        """

    /// Version 18: the time a batched test's process spent outside its tests (its runner's start-up) and in all, on the
    /// process's first attempt, with an index for the recent ones of a project: what `suite.batch: auto` sizes batches
    /// from.
    static let version18 = """
        ALTER TABLE attempts ADD COLUMN startup_ms bigint, ADD COLUMN process_ms bigint;
        CREATE INDEX attempts_startup ON attempts (project, finished_at DESC) WHERE startup_ms IS NOT NULL
        """

    /// Version 19: a run's scenario-days are counted with one statement per project and UTC day, its scenarios as an
    /// array, planned with their values. A join of one key per scenario is estimated at a row per key, and the planner
    /// then reads the runs table once per run against every attempt of those scenarios that day. Its sorts (the
    /// attempts of a day, in order) get the memory to stay off disk. A run that finished no attempt rolls up nothing
    /// (its keys, none, were the NULL that asks for a recount of every attempt). `dash_branches`: each project's
    /// branches, what the dashboards' branch variable offers and its "All" stands for.
    static let version19 = """
        \(rollUpDays())
        CREATE OR REPLACE FUNCTION orchestrate_roll_up_run(settled uuid) RETURNS void LANGUAGE sql AS $$
            SELECT orchestrate_roll_up_days(array_agg(project), array_agg(scenario_id), array_agg(day))
            FROM (SELECT DISTINCT project, scenario_id, (finished_at AT TIME ZONE 'UTC')::date AS day FROM attempts
                  WHERE run_id = settled AND state = 'finished' AND outcome IS NOT NULL) k
            HAVING count(*) > 0
        $$;
        CREATE VIEW dash_branches AS
        SELECT DISTINCT project, coalesce(branch, '') AS branch FROM runs
        """

    /// Version 20: the queue round (``RoundStatement``) as a procedure that commits its own work before it answers. Sent
    /// as one statement, a round is acknowledged only once committed — a commit that fails (a full disk, a deferred
    /// check) fails the call — and it holds its locks for its own execution only: in a transaction of the client's
    /// (BEGIN, the round, COMMIT) they were held across two more round trips, which a client short of CPU stretched, and
    /// claimers that had locked a just-claimed attempt (a row an older snapshot still saw queued) kept its owner's next
    /// round waiting. Its parameters are the round's, in order; its INOUT parameters are the answer's columns.
    static let version20 =
        roundProcedure(named: "orchestrate_round") + "BEGIN\n" + roundInput() + roundRecords() + roundClaims()
        + roundAnswers
        + roundOneRow + "    SELECT " + roundAckArrays + ",\n           " + roundClaimArrays() + roundOneRowEnd

    /// Version 21: the queue round in two transactions of the same call (``RoundStatement``), each with a snapshot of
    /// its own: first the completions, committed; then the claim, committed. As one statement, the claim read the queue
    /// as the statement's start saw it, which a wait on a row lock (an ack) could make seconds old: it then locked
    /// the newest version of every attempt claimed since (READ COMMITTED's re-check; a lock taken for a row that fails
    /// the re-check is kept), and the owners of those attempts waited for it to end to record their results, their
    /// own rounds growing longer in turn. Its own snapshot is taken when the claim starts, and its locks end with it.
    /// A retry queued by the first part is claimable by the second (it still avoids its slot for a while); a call that
    /// fails after the first commit has its completions kept, and sent again they are acknowledged as recorded.
    static let version21 = twoTransactionRound(named: "orchestrate_round2")

    /// Version 22: a quarantine with an end and an owner. `until` is the last UTC day it holds (`NULL`: until it is
    /// removed); a run planned after it does not shield the scenario, and the run's judge takes the entry out and says
    /// so. The dashboards' view shows both.
    static let version22 = """
        ALTER TABLE quarantine ADD COLUMN until date, ADD COLUMN owner text;

        CREATE OR REPLACE VIEW dash_quarantine AS
        SELECT project, scenario_id, reason, automatic, score, added_at, until, owner FROM quarantine
        """

    /// Version 23: the queue round told, per completion, whether a failure may be retried (`retries.when: evidence`
    /// withholds the retry of a failure without a cause outside the test: it reproduces), and the evidence that
    /// justified a retry stored with the attempt (`attempts.retry_evidence`). `orchestrate_round3` is
    /// `orchestrate_round2` with these two more parameters.
    static let version23 =
        "ALTER TABLE attempts ADD COLUMN retry_evidence text;\n\n"
        + twoTransactionRound(named: "orchestrate_round3", decidesRetries: true)

    /// Version 24: which failures a run's retries are for (`retries.when`: `any`, `evidence`), as its planner set it:
    /// every host that joins the run goes by it. `NULL` for runs planned before: every failure.
    static let version24 = """
        ALTER TABLE runs ADD COLUMN retry_when text CHECK (retry_when IN ('any', 'evidence'))
        """

    /// Version 25: a run's infrastructure incidents (``Incident``: an upstream's outage that many of its failures
    /// share), each with its host, first and last failing exchange and tests (`detail`, the incident as JSON), and the
    /// attempts each explains (`attempts.incident`, its number). Those attempts count in no scenario-day of the rollup,
    /// so in no flakiness score or quarantine.
    static let version25 = """
        CREATE TABLE incidents (
            run_id uuid NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
            number integer NOT NULL,
            host text NOT NULL,
            began_at timestamptz NOT NULL,
            ended_at timestamptz NOT NULL,
            attempts integer NOT NULL,
            detail jsonb NOT NULL,
            PRIMARY KEY (run_id, number)
        );
        ALTER TABLE attempts ADD COLUMN incident integer;
        \(rollUpDays(condition: "a.incident IS NULL"))
        """

    /// Version 26: each failed attempt's failure signature (``FailureSignature``: its place, its message with volatile
    /// parts normalised, its failing exchange), set by the run's judge; `orchestrate failures` groups a project's
    /// failures by it over a window (the partial index), the dashboards through `dash_failure_signatures`.
    static let version26 = """
        ALTER TABLE attempts ADD COLUMN signature text;
        CREATE INDEX attempts_signatures ON attempts (project, finished_at) WHERE signature IS NOT NULL;
        CREATE VIEW dash_failure_signatures AS
        SELECT a.project, coalesce(r.branch, '') AS branch, a.finished_at, a.run_id, a.scenario_id, a.signature,
               a.incident IS NOT NULL AS incident
        FROM attempts a JOIN runs r ON r.id = a.run_id
        WHERE a.signature IS NOT NULL
        """

    /// Version 27: flakiness by dependency. The endpoint a failed attempt's failure met (`attempts.failing_endpoint`, the
    /// exchange that failed at its failing step) and the one a verdict is attributed to (`run_scenarios.verdict_endpoint`:
    /// its failing lane's last failure's, else its first network difference's), both as `GET api.x.test/v1/carts/{id}`.
    /// `dash_flaky_endpoints` counts per project, branch, UTC day and endpoint the nondeterministic and drift verdicts and
    /// the failed attempts each explains (not an outage's: an incident has its own report); `orchestrate flaky --by
    /// endpoint` and the network dashboard read it.
    static let version27 = """
        ALTER TABLE attempts ADD COLUMN failing_endpoint text;
        ALTER TABLE run_scenarios ADD COLUMN verdict_endpoint text;
        CREATE VIEW dash_flaky_endpoints AS
        SELECT project, branch, day, endpoint, sum(nondeterministic)::bigint AS nondeterministic, sum(drift)::bigint AS drift,
               sum(failed_attempts)::bigint AS failed_attempts
        FROM (SELECT rs.project, coalesce(r.branch, '') AS branch, (r.created_at AT TIME ZONE 'UTC')::date AS day,
                     rs.verdict_endpoint AS endpoint, (rs.verdict = 'nondeterministic')::int AS nondeterministic,
                     (rs.verdict = 'drift')::int AS drift, 0 AS failed_attempts
              FROM run_scenarios rs JOIN runs r ON r.id = rs.run_id
              WHERE rs.verdict_endpoint IS NOT NULL AND rs.verdict IN ('nondeterministic', 'drift')
              UNION ALL
              SELECT a.project, coalesce(r.branch, ''), (a.finished_at AT TIME ZONE 'UTC')::date, a.failing_endpoint, 0, 0, 1
              FROM attempts a JOIN runs r ON r.id = a.run_id
              WHERE a.signature IS NOT NULL AND a.failing_endpoint IS NOT NULL AND a.incident IS NULL) x
        GROUP BY project, branch, day, endpoint
        """

    /// Version 28: selection from footprints. What each test touched on its last run at a clean git revision
    /// (`footprints`: its own files, its feature file, its cassette and the source files it ran, as paths from the
    /// repository's root, with the lines it ran of each source file (`lines`, beside `files`: `1-5,8`, empty for a
    /// whole file); the endpoints of its exchanges as `GET api.x.test/v1/carts/{id}`; `covers`: the kinds of file, by
    /// extension, its coverage knows them all of), one row per test and revision; the lines of each source file each
    /// test of a run ran, by the coverage context that names it and the report (the attempt) it is in, what ran outside
    /// any test under the empty context (`test_coverage`, from coverage.py's reports); the tests a run
    /// left out and why (`run_skips`, with the time history expected of them); what chose the run's tests
    /// (`runs.selection`), and the tests it ran only as a sample of those it would have left out
    /// (`run_scenarios.sampled`: their failures are the selection's misses).
    static let version28 = """
        CREATE TABLE footprints (
            project text NOT NULL,
            scenario_id text NOT NULL,
            revision text NOT NULL,
            run_id uuid NOT NULL,
            recorded_at timestamptz NOT NULL DEFAULT now(),
            files text[] NOT NULL DEFAULT '{}',
            lines text[] NOT NULL DEFAULT '{}',
            endpoints text[] NOT NULL DEFAULT '{}',
            covers text[] NOT NULL DEFAULT '{}',
            PRIMARY KEY (project, scenario_id, revision)
        );
        CREATE TABLE test_coverage (
            run_id uuid NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
            report bigint NOT NULL,
            context text NOT NULL,
            file text NOT NULL,
            lines text NOT NULL,
            PRIMARY KEY (run_id, report, context, file)
        );
        CREATE INDEX footprints_recorded ON footprints (recorded_at);
        CREATE TABLE run_skips (
            run_id uuid NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
            scenario_id text NOT NULL,
            name text NOT NULL,
            uri text,
            runner boolean NOT NULL,
            reason text NOT NULL,
            expected_ms bigint,
            position integer NOT NULL,
            PRIMARY KEY (run_id, scenario_id)
        );
        ALTER TABLE runs ADD COLUMN selection text;
        ALTER TABLE run_scenarios ADD COLUMN sampled boolean NOT NULL DEFAULT false
        """

    /// Version 29: likely failures first (`run --order likely-failing`). A run's first attempts carry a rank
    /// (`attempts.rank`; 1 for a new test, one that failed lately or whose footprint the change touches, 0 otherwise);
    /// `orchestrate_round4` is `orchestrate_round3` claiming the highest rank first, then the longest expected, and
    /// answering its claims in that order (round 3 answers them in attempt id order, which its callers sort longest first
    /// again). The claimable index follows. Hosts of the version before keep calling round 3, which ignores the rank.
    static let version29 =
        """
        ALTER TABLE attempts ADD COLUMN rank smallint NOT NULL DEFAULT 0;
        DROP INDEX attempts_claimable;
        CREATE INDEX attempts_claimable ON attempts (run_id, rank DESC, expected_ms DESC NULLS FIRST, id) WHERE state = 'queued';

        """
        + twoTransactionRound(named: "orchestrate_round4", decidesRetries: true, order: .rankedFirst)

    /// Version 30: fail fast on every host (`run --fail-fast N`). `runs.fail_fast` is the planner's N; the first host
    /// to count N genuine failures (scenarios settled failed, not quarantined) sets `runs.stop_reason`, and every host
    /// of the run, seeing it, ends its running attempts and leaves what is queued unrun.
    static let version30 = """
        ALTER TABLE runs ADD COLUMN fail_fast integer CHECK (fail_fast > 0), ADD COLUMN stop_reason text
        """

    /// Version 31: a settled run's scenario-days are added to, not counted again. Each row says where its first and
    /// last counted attempt fall (finish time, then id); a run whose attempts of a key all come after the row's last
    /// adds its own tally to it (the pair across the join counted once), and a key it has no row for gets its tally. A
    /// key whose row counted any of the run's attempts already (a run settled again, or counted by another run's recount
    /// before it settled), a row from before this version, and a key of an attempt of an incident are counted again
    /// whole, as before. So a run's rollup reads its own attempts, where the recount read every attempt of its scenarios
    /// that day (and the day's runs of one suite made each rollup longer). A rollup chosen as a deadlock's victim (rows
    /// added to, then others counted again, are not taken in key order) is undone and tried again; its last two tries
    /// count every key of the run again, in the table's key order.
    static let version31 = """
        ALTER TABLE scenario_days ADD COLUMN first_at timestamptz, ADD COLUMN first_attempt bigint,
            ADD COLUMN last_at timestamptz, ADD COLUMN last_attempt bigint;
        \(rollUpDays(condition: "a.incident IS NULL", positions: true))
        CREATE OR REPLACE FUNCTION orchestrate_roll_up_run(settled uuid) RETURNS void
        LANGUAGE plpgsql SET work_mem = '32MB' AS $f$
        DECLARE
            -- The keys counted again whole.
            again_project text[];
            again_scenario text[];
            again_day date[];
            tries integer := 0;
        BEGIN
            LOOP
                tries := tries + 1;
                BEGIN
                    IF tries <= 3 THEN
                        WITH tally AS (
                            \(scenarioDaysTally(
                                of: "attempts a CROSS JOIN LATERAL (SELECT a.project, a.scenario_id, (a.finished_at AT TIME ZONE 'UTC')::date) AS k(project, scenario_id, day)",
                                where: "a.run_id = settled AND a.incident IS NULL", positions: true))
                        ), added AS (
                            INSERT INTO scenario_days AS d (\(scenarioDaysColumns(positions: true)))
                            SELECT * FROM tally
                            ON CONFLICT (project, day, scenario_id, branch, git_revision, live) DO UPDATE SET
                                attempts = d.attempts + excluded.attempts, passes = d.passes + excluded.passes,
                                transitions = d.transitions + excluded.transitions + 1,
                                flips = d.flips + excluded.flips + (d.last_passed <> excluded.first_passed)::integer,
                                last_passed = excluded.last_passed, last_at = excluded.last_at, last_attempt = excluded.last_attempt
                            WHERE (d.last_at, d.last_attempt) < (excluded.first_at, excluded.first_attempt)
                            -- The key's last attempt is the run's: it names the key (a hashed lookup; the planner, expecting
                            -- a row or so of each side, compared every key with every other).
                            RETURNING d.last_attempt
                        )
                        SELECT array_agg(project), array_agg(scenario_id), array_agg(day) INTO again_project, again_scenario, again_day
                        FROM (SELECT t.project, t.scenario_id, t.day FROM tally t WHERE t.last_attempt NOT IN (SELECT last_attempt FROM added)
                              UNION
                              SELECT a.project, a.scenario_id, (a.finished_at AT TIME ZONE 'UTC')::date FROM attempts a
                              WHERE a.run_id = settled AND a.state = 'finished' AND a.outcome IS NOT NULL AND a.incident IS NOT NULL) k;
                        IF again_project IS NOT NULL THEN
                            PERFORM orchestrate_roll_up_days(again_project, again_scenario, again_day);
                        END IF;
                    ELSE
                        -- Every key of the run counted again whole, its rows taken in the table's key order.
                        PERFORM orchestrate_roll_up_days(array_agg(project), array_agg(scenario_id), array_agg(day))
                        FROM (SELECT DISTINCT project, scenario_id, (finished_at AT TIME ZONE 'UTC')::date AS day FROM attempts
                              WHERE run_id = settled AND state = 'finished' AND outcome IS NOT NULL) k
                        HAVING count(*) > 0;
                    END IF;
                    RETURN;
                EXCEPTION WHEN deadlock_detected THEN
                    -- Undone, its locks let go (rows added to, then others counted again, are not taken in key order):
                    -- tried again after a moment, the fourth and fifth time counting every key again in key order.
                    IF tries >= 5 THEN
                        RAISE;
                    END IF;
                    PERFORM pg_sleep(0.02 * tries * random());
                END;
            END LOOP;
        END
        $f$;
        """

    /// `orchestrate_roll_up_days` as migration 19 makes it (every finished attempt of the keys' days counted), and as
    /// migration 25 does with a `condition` more on the attempts: then each key's rows are deleted before they are
    /// counted again, so that a row counted before the condition left its attempts out (another run's rollup of the
    /// same day, before this run's judge marked its incidents) does not stay.
    private static func rollUpDays(condition: String? = nil, positions: Bool = false) -> String {
        """
        CREATE OR REPLACE FUNCTION orchestrate_roll_up_days(keys_project text[], keys_scenario text[], keys_day date[]) RETURNS void
        LANGUAGE plpgsql SET work_mem = '32MB' AS $f$
        DECLARE
            key record;
        BEGIN
            IF keys_project IS NULL THEN
                -- Every finished attempt, in one pass.\(condition == nil ? "" : "\n        DELETE FROM scenario_days;")
                EXECUTE format($q$\(scenarioDaysUpsert(positions: positions))$q$,
                    $s$attempts a CROSS JOIN LATERAL (SELECT a.project, a.scenario_id, (a.finished_at AT TIME ZONE 'UTC')::date) AS k(project, scenario_id, day)$s$,
                    '\(condition ?? "true")');
                RETURN;
            END IF;
            -- In the order of the table's key, so that rollups of runs that settle together take their rows in one order.
            FOR key IN SELECT u.project, u.day, array_agg(DISTINCT u.scenario_id) AS scenarios
                       FROM unnest(keys_project, keys_scenario, keys_day) AS u(project, scenario_id, day)
                       GROUP BY u.project, u.day ORDER BY u.project, u.day LOOP\(condition == nil ? "" : """

                        -- Counted again whole: a row whose attempts are all left out now (an incident's) goes.
                        DELETE FROM scenario_days WHERE project = key.project AND day = key.day AND scenario_id = ANY (key.scenarios);
                """)
                EXECUTE format($q$\(scenarioDaysUpsert(positions: positions))$q$,
                    $s$attempts a CROSS JOIN LATERAL (SELECT a.project, a.scenario_id, $3::date) AS k(project, scenario_id, day)$s$,
                    $s$a.project = $1 AND a.scenario_id = ANY ($2) AND a.finished_at >= $3::timestamp AT TIME ZONE 'UTC'
                       AND a.finished_at < ($3 + 1)::timestamp AT TIME ZONE 'UTC'\(condition.map { " AND \($0)" } ?? "")$s$)
                USING key.project, key.scenarios, key.day;
            END LOOP;
        END
        $f$;
        """
    }

    /// The round of migrations 21, 23 and 29: completions committed, then the claim committed. `decidesRetries`: the
    /// caller says for each failure whether it may be retried, and with what evidence (migration 23); `order`: the
    /// order the claim takes queued attempts in (migration 29 puts a run's likely failures first).
    private static func twoTransactionRound(
        named name: String, decidesRetries: Bool = false, order: ClaimOrder = .longestFirst, lanesIndexed: Bool = false
    ) -> String {
        roundProcedure(named: name, decidesRetries: decidesRetries) + """
            BEGIN
                ack_ids := '{}'; ack_accepted := '{}'; ack_retried := '{}'; ack_settled := '{}';
                claim_ids := '{}'; claim_scenarios := '{}'; claim_attempts := '{}'; claim_tokens := '{}';
                claim_expected := '{}'; claim_modes := '{}'; claim_avoid := '{}'; claim_lost := '{}'; queued := -1;
                running := -1;
                IF cardinality($2::bigint[]) > 0 THEN

            """ + roundInput(decidesRetries) + roundRecords(decidesRetries, ranked: order == .rankedFirst)
            + roundAnswers
            + "    )\n    SELECT "
            + roundAckArrays + """

                    INTO ack_ids, ack_accepted, ack_retried, ack_settled;
                    COMMIT;
                    END IF;
                    IF cardinality($3::text[]) > 0 THEN

                """ + roundInput(decidesRetries) + roundClaims(order, lanesIndexed: lanesIndexed) + "    )\n    SELECT "
            + roundClaimArrays(order: order.answers) + ",\n"
            + roundLeft(
                "What is left of the run, when a claimant got nothing (-1 otherwise); the results are committed.",
                queued: "- (SELECT count(*) FROM claimed)", running: "+ (SELECT count(*) FROM claimed)")
                + """
                    INTO claim_ids, claim_scenarios, claim_attempts, claim_tokens, claim_expected, claim_modes, claim_avoid,
                         claim_lost, queued, running;
                    COMMIT;
                    END IF;
                END
                $p$
                """
    }

    /// Version 32: a compare run's claims find the scenario's other lane by the run's lane index. Its subqueries ask
    /// for an attempt with a worker, which only a finished attempt has; they now say that it is not abandoned, which the
    /// index's condition needs. Without it each claim of a compare run read every attempt of every run: 5 s a round
    /// with a million attempts stored. The round is the same procedure, answering the same.
    static let version32 = twoTransactionRound(
        named: "orchestrate_round4", decidesRetries: true, order: .rankedFirst, lanesIndexed: true)

    /// Version 33: the foreign keys checked row by row as a run is planned go: from a run's scenarios to the run and to
    /// the suite's scenarios, and from attempts to the run's scenarios. Planning writes the run, its scenarios and their
    /// first attempts in one statement from the same rows, and checking each row was a third of that statement (38 of
    /// 110 ms for 2,000 tests, on every run's way to its first attempt); each check of a scenario also locked its row, a
    /// write to a table every run of the suite reads. Nothing deletes runs or scenarios, and retries and requeues copy
    /// attempts of the run: as with exchanges (version 5), what the keys checked holds by how the rows are written. The
    /// keys are named as every earlier version made them: a database without them is not one this version knows.
    static let version33 = """
        ALTER TABLE run_scenarios DROP CONSTRAINT run_scenarios_run_id_fkey,
            DROP CONSTRAINT run_scenarios_project_scenario_id_fkey;
        ALTER TABLE attempts DROP CONSTRAINT attempts_run_id_scenario_id_fkey;
        """

    /// Version 34: a run's scenarios are written half a page apart. Each is written as the run is planned and changed
    /// as it settles: its result (each lane's, in a compare run), with a pass's verdict, a round's all in one
    /// statement; then, where it differs, the verdict the judge writes. Without room on its page, each new version went
    /// to another page with an entry in both of the table's indexes; with room, it stays on its page without new index
    /// entries (a heap-only update), as long as the page has room for the settled row, which is longer (a result, a
    /// verdict and its reason). Pages written from now on hold half the rows they could: the table takes about twice
    /// the room.
    static let version34 = "ALTER TABLE run_scenarios SET (fillfactor = 50);"

    /// The queue round's procedure, as migrations 20, 21 and 23 make it: its name, its parameters (the round's, in order)
    /// and its INOUT parameters (the answer's columns), up to its body.
    private static func roundProcedure(named name: String, decidesRetries: Bool = false) -> String {
        """
        CREATE OR REPLACE PROCEDURE \(name)(
            uuid, bigint[], text[], text, bigint, text, bigint, uuid[], text[], integer[], bigint[], text[], integer[],
            integer[], integer[], text[], text[], text[], text, text, bigint[], bigint[],\(decidesRetries ? " boolean[], text[]," : "")
            INOUT ack_ids bigint[] DEFAULT NULL,
            INOUT ack_accepted boolean[] DEFAULT NULL,
            INOUT ack_retried boolean[] DEFAULT NULL,
            INOUT ack_settled text[] DEFAULT NULL,
            INOUT claim_ids bigint[] DEFAULT NULL,
            INOUT claim_scenarios text[] DEFAULT NULL,
            INOUT claim_attempts integer[] DEFAULT NULL,
            INOUT claim_tokens uuid[] DEFAULT NULL,
            INOUT claim_expected bigint[] DEFAULT NULL,
            INOUT claim_modes text[] DEFAULT NULL,
            INOUT claim_avoid text[] DEFAULT NULL,
            INOUT claim_lost text[] DEFAULT NULL,
            INOUT queued bigint DEFAULT NULL,
            INOUT running bigint DEFAULT NULL)
        LANGUAGE plpgsql AS $p$
        #variable_conflict use_column

        """
    }

    /// The round's completions, as parallel arrays (the first of a statement's common table expressions);
    /// `decidesRetries`: with whether each may be retried and its evidence ($23, $24).
    private static func roundInput(_ decidesRetries: Bool = false) -> String {
        """
            WITH input AS (
                -- The completions as parallel arrays; absent numbers are -1 and an absent error is ''.
                SELECT u.id, u.token, u.worker, u.port, u.duration_ms, u.outcome, nullif(u.exit_code, -1) AS exit_code,
                       nullif(u.signal, -1) AS signal, nullif(u.pid, -1) AS pid, u.stdout, u.stderr, nullif(u.error, '') AS error,
                       nullif(u.startup_ms, -1) AS startup_ms, nullif(u.process_ms, -1) AS process_ms\(decidesRetries ? ", u.may_retry, nullif(u.evidence, '') AS evidence" : "")
                FROM unnest($2::bigint[], $8::uuid[], $9::text[], $10::integer[], $11::bigint[], $12::text[], $13::integer[],
                            $14::integer[], $15::integer[], $16::text[], $17::text[], $18::text[], $21::bigint[], $22::bigint[]\(decidesRetries ? ", $23::boolean[], $24::text[]" : ""))
                     AS u(id, token, worker, port, duration_ms, outcome, exit_code, signal, pid, stdout, stderr, error, startup_ms,
                          process_ms\(decidesRetries ? ", may_retry, evidence" : ""))

        """
    }

    /// The round's writes of its completions: results under their leases, fenced late ones, retries, settled scenarios.
    /// `decidesRetries`: a failure is retried only when its completion says it may be, and its evidence is stored.
    /// `ranked`: a retry keeps its attempt's rank (migration 29).
    private static func roundRecords(_ decidesRetries: Bool = false, ranked: Bool = false) -> String {
        """
            ), done AS (
                UPDATE attempts a
                SET state = 'finished', finished_at = statement_timestamp(), duration_ms = x.duration_ms, outcome = x.outcome,
                    exit_code = x.exit_code, signal = x.signal, pid = x.pid, stdout = x.stdout, stderr = x.stderr,
                    error = x.error, worker = x.worker, port = x.port, lease_expires_at = NULL, startup_ms = x.startup_ms,
                    process_ms = x.process_ms\(decidesRetries ? ", retry_evidence = x.evidence" : "")
                FROM input x
                -- A lookup by id for each completion. Written `state = 'running'`, the condition matches the partial index
                -- of running attempts, which the planner (its statistics taken between runs) expects to hold a row or so:
                -- it then reads every running attempt once per completion, quadratic in a batch's size.
                WHERE a.id = x.id AND a.lease_token = x.token AND a.state || '' = 'running'
                RETURNING a.id, a.run_id, a.project, a.scenario_id, a.attempt, a.expected_ms, a.worker, a.outcome, a.mode, a.probe\(decidesRetries ? ", x.may_retry" : "")\(ranked ? ", a.rank" : "")
            ), late AS (
                -- A completion whose lease was taken back (its host was presumed lost and the attempt requeued) does not count,
                -- but the abandoned execution keeps what it said, for the record.
                UPDATE attempts a
                SET fenced = jsonb_build_object('outcome', x.outcome, 'duration_ms', x.duration_ms, 'exit_code', x.exit_code,
                                                'worker', x.worker, 'at', statement_timestamp())
                FROM input x
                WHERE a.id = x.id AND a.lease_token = x.token AND a.state = 'abandoned'
            ), retry AS (
                INSERT INTO attempts (run_id, project, scenario_id, attempt, mode, expected_ms, avoid_worker, avoid_until\(ranked ? ", rank" : ""))
                SELECT d.run_id, d.project, d.scenario_id, d.attempt + 1, d.mode, d.expected_ms, d.worker, statement_timestamp() + $7::bigint * interval '1 millisecond'\(ranked ? ", d.rank" : "")
                FROM done d JOIN run_scenarios rs ON rs.run_id = d.run_id AND rs.scenario_id = d.scenario_id
                WHERE d.outcome <> 'passed' AND d.attempt < rs.max_attempts AND NOT d.probe\(decidesRetries ? " AND d.may_retry" : "")
                ON CONFLICT DO NOTHING
                RETURNING run_id, scenario_id
            ), lane AS (
                -- A lane's last word; with one lane (every run but a compare run) it is the scenario's result, and the
                -- lanes object (lane → result, for a compare run's settlement) is not needed.
                SELECT run_id, scenario_id, min(lane_count) AS lane_count, max(result) AS result,
                       jsonb_object_agg(lane, result) FILTER (WHERE lane_count > 1) AS results, max(id) AS newest
                FROM (SELECT d.id, d.run_id, d.scenario_id, rs.lane_count, coalesce(d.mode, '') AS lane,
                             CASE WHEN d.outcome = 'passed' THEN (CASE WHEN d.attempt > 1 THEN 'flaky' ELSE 'passed' END)
                                  ELSE 'failed' END AS result
                      FROM done d JOIN run_scenarios rs ON rs.run_id = d.run_id AND rs.scenario_id = d.scenario_id
                      -- An extra run of a new test (a probe) has no say: its scenario settled with its first attempt.
                      WHERE NOT d.probe AND (d.outcome = 'passed' OR d.attempt >= rs.max_attempts\(decidesRetries ? " OR NOT d.may_retry" : ""))) last_word
                GROUP BY run_id, scenario_id
            ), settle AS (
                UPDATE run_scenarios rs
                SET lanes = CASE WHEN l.lane_count = 1 THEN rs.lanes ELSE rs.lanes || l.results END,
                    result = CASE WHEN l.lane_count = 1 THEN l.result ELSE (
                        SELECT CASE WHEN count(*) < rs.lane_count THEN NULL WHEN bool_or(v = 'failed') THEN 'failed'
                                    WHEN bool_or(v = 'flaky') THEN 'flaky' ELSE 'passed' END
                        FROM jsonb_each_text(rs.lanes || l.results) AS e(k, v)) END,
                    -- A single lane's pass gets the verdict such a pass gets unless history says otherwise ($19, $20; '' for
                    -- none): the judge then writes only the verdicts that differ, not one per scenario of every run.
                    verdict = CASE WHEN l.lane_count = 1 AND l.result = 'passed' AND $19::text <> '' THEN $19::text ELSE rs.verdict END,
                    verdict_reason = CASE WHEN l.lane_count = 1 AND l.result = 'passed' AND $19::text <> '' THEN $20::text
                                          ELSE rs.verdict_reason END
                FROM lane l
                WHERE rs.run_id = l.run_id AND rs.scenario_id = l.scenario_id
                RETURNING rs.run_id, rs.scenario_id, rs.result, l.newest

        """
    }

    /// The order the round claims queued attempts in, and answers them in.
    private enum ClaimOrder {
        /// Before migration 29: the longest expected first, the never seen before all; answered by attempt id (the
        /// caller sorted them again).
        case longestFirst
        /// Migration 29: the highest rank first, then the longest expected; answered in that order.
        case rankedFirst

        var queue: String {
            switch self {
            case .longestFirst: "q.expected_ms DESC NULLS FIRST, q.id"
            case .rankedFirst: "q.rank DESC, q.expected_ms DESC NULLS FIRST, q.id"
            }
        }

        var answers: String {
            switch self {
            case .longestFirst: "id"
            case .rankedFirst: "rank DESC, expected_ms DESC NULLS FIRST, id"
            }
        }
    }

    /// The round's claim: the first queued attempts in `order` the asking slots may take, leased.
    private static func roundClaims(_ order: ClaimOrder = .longestFirst, lanesIndexed: Bool = false) -> String {
        // An attempt with a worker finished: said (migration 32), the run's lane index finds the scenario's other lane
        // (without it, each compare-run claim read every attempt of every run).
        let finished = lanesIndexed ? " AND s.state <> 'abandoned'" : ""
        return """
                ), next AS (
                    SELECT q.id FROM attempts q
                    WHERE q.run_id = $1::uuid AND q.state = 'queued'
                      AND (q.avoid_worker IS NULL OR q.avoid_until <= statement_timestamp() OR cardinality($3::text[]) > 1
                           OR q.avoid_worker <> ($3::text[])[1])
                      AND (q.mode IS NULL OR cardinality($3::text[]) > 1 OR (SELECT workers FROM runs WHERE id = $1::uuid) = 1
                           OR NOT EXISTS (SELECT 1 FROM attempts s WHERE s.run_id = q.run_id AND s.scenario_id = q.scenario_id
                                            AND s.mode <> q.mode AND s.worker = ($3::text[])[1]\(finished))
                              AND NOT EXISTS (SELECT 1 FROM input x JOIN attempts d ON d.id = x.id WHERE d.run_id = q.run_id
                                                AND d.scenario_id = q.scenario_id AND d.mode <> q.mode AND x.worker = ($3::text[])[1]))
                    ORDER BY \(order.queue)
                    LIMIT cardinality($3::text[])
                    FOR UPDATE SKIP LOCKED
                ), claimed AS (
                    UPDATE attempts a
                    SET state = 'running', lease_owner = $4::text, lease_token = gen_random_uuid(),
                        lease_expires_at = statement_timestamp() + $5::bigint * interval '1 millisecond',
                        host = $6::text, worker = NULL, port = NULL, started_at = clock_timestamp()
                    FROM next
                    WHERE a.id = next.id
                    -- Which scenario, not its definition: the caller has the run's plan (PlannedScenarios).
                    RETURNING a.id, a.scenario_id, a.attempt, a.lease_token, a.expected_ms,\(order == .rankedFirst ? " a.rank," : "")
                              CASE WHEN a.avoid_until > statement_timestamp() THEN a.avoid_worker
                                   WHEN a.mode IS NOT NULL THEN coalesce(
                                       (SELECT s.worker FROM attempts s WHERE s.run_id = a.run_id AND s.scenario_id = a.scenario_id
                                          AND s.mode <> a.mode AND s.worker IS NOT NULL\(finished) ORDER BY s.id DESC LIMIT 1),
                                       (SELECT x.worker FROM input x JOIN attempts d ON d.id = x.id WHERE d.run_id = a.run_id
                                          AND d.scenario_id = a.scenario_id AND d.mode <> a.mode LIMIT 1)) END AS avoid, a.mode,
                              array_to_string(a.lost_hosts, ' ') AS lost

            """
    }

    /// What the acks say: accepted, a retry queued, the result a scenario settled with.
    private static let roundAnswers = """
            ), answers AS (
                -- What the acks say of their scenarios, as two objects read by key: the scenarios a retry was queued for, and
                -- the result a scenario settled with, under the id of its newest completion this round (a scenario settles
                -- once: when both lanes of a compare run finish in one round, the later one says so). Joined instead, these
                -- statement-made rows, each expected to be a row or so, are read once per completion.
                SELECT (SELECT coalesce(jsonb_object_agg(r.run_id::text || '/' || r.scenario_id, true), '{}') FROM retry r) AS retried,
                       (SELECT coalesce(jsonb_object_agg(st.newest::text, st.result), '{}') FROM settle st) AS settled
            ), acks AS (
                -- A result recorded already under the same token was this round's own, sent again after its answer was lost
                -- (the server died after committing it): accepted, with what it did then.
                SELECT x.id, d.id IS NOT NULL OR f.id IS NOT NULL AS accepted,
                       CASE WHEN d.id IS NOT NULL THEN o.retried ? (d.run_id::text || '/' || d.scenario_id)
                            ELSE f.next IS NOT NULL END AS retried,
                       CASE WHEN d.id IS NOT NULL THEN o.settled ->> d.id::text
                            WHEN f.id IS NOT NULL AND f.next IS NULL THEN
                                (SELECT rs.result FROM run_scenarios rs WHERE rs.run_id = f.run_id AND rs.scenario_id = f.scenario_id)
                       END AS settled
                FROM input x CROSS JOIN answers o LEFT JOIN done d ON d.id = x.id
                -- LIMIT 1 keeps this a lookup by id for each completion: joined instead, with the statistics of a young table
                -- it became a scan of every finished attempt in the database.
                LEFT JOIN LATERAL (
                    SELECT a.id, a.run_id, a.scenario_id,
                           (SELECT n.id FROM attempts n WHERE n.run_id = a.run_id AND n.scenario_id = a.scenario_id
                              AND n.mode IS NOT DISTINCT FROM a.mode AND n.attempt = a.attempt + 1 AND n.state <> 'abandoned' LIMIT 1) AS next
                    FROM attempts a WHERE d.id IS NULL AND a.id = x.id AND a.lease_token = x.token AND a.state = 'finished'
                    LIMIT 1
                ) f ON true

        """

    private static let roundOneRow = """
            )
            -- One row: arrays in the same order (by attempt id) rather than a row per attempt, which cost the client more to
            -- take apart than the server to build. Absent values are '' and -1 (arrays cannot carry NULLs to the client).

        """

    /// The acks' columns, in attempt id order.
    private static let roundAckArrays = """
        (SELECT coalesce(array_agg(id ORDER BY id), '{}') FROM acks) AS ack_ids,
                   (SELECT coalesce(array_agg(accepted ORDER BY id), '{}') FROM acks) AS ack_accepted,
                   (SELECT coalesce(array_agg(retried ORDER BY id), '{}') FROM acks) AS ack_retried,
                   (SELECT coalesce(array_agg(coalesce(settled, '') ORDER BY id), '{}') FROM acks) AS ack_settled
        """

    /// The claimed attempts' columns, in attempt id order (`order`: another, of the claimed rows' columns).
    private static func roundClaimArrays(order: String = "id") -> String {
        """
        (SELECT coalesce(array_agg(id ORDER BY \(order)), '{}') FROM claimed) AS claim_ids,
                   (SELECT coalesce(array_agg(scenario_id ORDER BY \(order)), '{}') FROM claimed) AS claim_scenarios,
                   (SELECT coalesce(array_agg(attempt ORDER BY \(order)), '{}') FROM claimed) AS claim_attempts,
                   (SELECT coalesce(array_agg(lease_token ORDER BY \(order)), '{}') FROM claimed) AS claim_tokens,
                   (SELECT coalesce(array_agg(coalesce(expected_ms, -1) ORDER BY \(order)), '{}') FROM claimed) AS claim_expected,
                   (SELECT coalesce(array_agg(coalesce(mode, '') ORDER BY \(order)), '{}') FROM claimed) AS claim_modes,
                   (SELECT coalesce(array_agg(coalesce(avoid, '') ORDER BY \(order)), '{}') FROM claimed) AS claim_avoid,
                   (SELECT coalesce(array_agg(lost ORDER BY \(order)), '{}') FROM claimed) AS claim_lost
        """
    }

    private static let roundOneRowEnd =
        ",\n"
        + roundLeft(
            "What is left of the run, when a claimant got nothing (-1 otherwise).",
            queued: "- (SELECT count(*) FROM claimed) + (SELECT count(*) FROM retry)",
            running: "- (SELECT count(*) FROM done) + (SELECT count(*) FROM claimed)")
            + """
                INTO ack_ids, ack_accepted, ack_retried, ack_settled, claim_ids, claim_scenarios, claim_attempts, claim_tokens,
                     claim_expected, claim_modes, claim_avoid, claim_lost, queued, running;
                COMMIT;
            END
            $p$
            """

    /// The answer's `queued` and `running` columns: what is left of the run when a claimant got nothing (-1 otherwise),
    /// counted as the statement's snapshot saw it and corrected by what the statement itself changed (`queued`,
    /// `running`), under a comment line.
    private static func roundLeft(_ comment: String, queued: String, running: String) -> String {
        """
                   -- \(comment)
                   CASE WHEN (SELECT count(*) FROM claimed) < cardinality($3::text[]) THEN
                       (SELECT count(*) FROM attempts WHERE run_id = $1::uuid AND state = 'queued')
                           \(queued)
                   ELSE -1 END AS queued,
                   CASE WHEN (SELECT count(*) FROM claimed) < cardinality($3::text[]) THEN
                       (SELECT count(*) FROM attempts WHERE run_id = $1::uuid AND state = 'running')
                           \(running)
                   ELSE -1 END AS running

        """
    }

    /// The statement that counts `scenario_days` again from `attempts` (a `format` template): its first `%s` the source
    /// of the attempts, as `a` beside their key `k` (project, scenario id, day); its second a condition on them.
    /// `positions`: with where each row's first and last counted attempt fall (migration 31).
    private static func scenarioDaysUpsert(positions: Bool = false) -> String {
        """
        INSERT INTO scenario_days AS d (\(scenarioDaysColumns(positions: positions)))
        \(scenarioDaysTally(of: "%s", where: "%s", positions: positions))
        ON CONFLICT (project, day, scenario_id, branch, git_revision, live) DO UPDATE SET
            attempts = excluded.attempts, passes = excluded.passes, transitions = excluded.transitions, flips = excluded.flips,
            first_passed = excluded.first_passed, last_passed = excluded.last_passed\(positions ? positionsSet : "")
        """
    }

    /// Where a row's first and last counted attempt fall: tallied, and set by a recount.
    private static let positionsTally = """
        ,
               min(finished_at) FILTER (WHERE position = 1) AS first_at, min(id) FILTER (WHERE position = 1) AS first_attempt,
               max(finished_at) FILTER (WHERE position = size) AS last_at, max(id) FILTER (WHERE position = size) AS last_attempt
        """
    private static let positionsSet = """
        ,
            first_at = excluded.first_at, first_attempt = excluded.first_attempt, last_at = excluded.last_at,
            last_attempt = excluded.last_attempt
        """

    /// `scenario_days`' columns, in the order ``scenarioDaysTally(of:where:positions:)`` gives them.
    private static func scenarioDaysColumns(positions: Bool) -> String {
        """
        project, scenario_id, branch, git_revision, live, day, attempts, passes, transitions, flips,
                                        first_passed, last_passed\(positions ? ", first_at, first_attempt, last_at, last_attempt" : "")
        """
    }

    /// `scenario_days`' rows counted from the finished attempts in `source` (as `a` beside their key `k`: project,
    /// scenario id, day) that meet `condition`, in the table's key order.
    private static func scenarioDaysTally(of source: String, where condition: String, positions: Bool) -> String {
        """
        SELECT project, scenario_id, branch, git_revision, live, day, count(*), count(*) FILTER (WHERE passed), count(previous),
               count(*) FILTER (WHERE previous <> passed), bool_or(passed) FILTER (WHERE position = 1),
               bool_or(passed) FILTER (WHERE position = size)\(positions ? positionsTally : "")
        FROM (
            SELECT *, lag(passed) OVER w AS previous, row_number() OVER w AS position,
                   count(*) OVER (PARTITION BY project, scenario_id, branch, git_revision, live, day) AS size
            FROM (SELECT k.project, k.scenario_id, k.day, coalesce(r.branch, '') AS branch, coalesce(r.git_revision, '') AS git_revision,
                         coalesce(a.mode, r.mode) IN ('live', 'record') AS live, a.outcome = 'passed' AS passed, a.finished_at, a.id
                  FROM \(source)
                  JOIN runs r ON r.id = a.run_id
                  WHERE a.state = 'finished' AND a.outcome IS NOT NULL AND \(condition)) t
            WINDOW w AS (PARTITION BY project, scenario_id, branch, git_revision, live, day ORDER BY finished_at, id)
        ) x
        GROUP BY project, scenario_id, branch, git_revision, live, day
        ORDER BY project, day, scenario_id, branch, git_revision, live
        """
    }

    /// `endpoint_days`' tallies (its columns in order) of the exchanges in `relation` (the table, or a trigger's new
    /// rows): counted per attempt first, so that each attempt's project and branch are looked up once.
    private static func endpointTally(from relation: String) -> String {
        """
        SELECT a.project, coalesce(r.branch, ''), e.day, e.method, e.endpoint, e.bucket, sum(e.requests), sum(e.errors), sum(e.misses)
        FROM (SELECT attempt_id, (started_at AT TIME ZONE 'UTC')::date AS day, method,
                     host || split_part(split_part(url, '?', 1), host, 2) AS endpoint, orchestrate_latency_bucket(duration_us) AS bucket,
                     count(*) AS requests, count(*) FILTER (WHERE status IS NULL OR status >= 500) AS errors,
                     count(*) FILTER (WHERE NOT matched AND mode = 'replay') AS misses
              FROM \(relation) GROUP BY 1, 2, 3, 4, 5) e
        JOIN attempts a ON a.id = e.attempt_id JOIN runs r ON r.id = a.run_id
        GROUP BY 1, 2, 3, 4, 5, 6
        """
    }
}
