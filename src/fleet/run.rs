//! One run measured by every rank of a fleet, and the protocol that keeps it from hanging: every
//! rank sets up, then meets the others at the start gate with its outcome (a rank that failed
//! before it — a missing target — meets them with its error, so all fail with its message);
//! after the run, rank 0 gathers every rank's result or error, builds the document, and tells
//! every rank the verdict, so all ranks return the same outcome and move on (or stop) together.

use super::gate::{Gate, NOTICE};
use super::merge::{self, Arrival};
use super::{Failure, Fleet, MEET_WITHIN};
use crate::config::RunConfig;
use crate::error::{Error, Result};
use crate::result::fleet::FleetMember;
use crate::result::{Document, EndedBy, SCHEMA};
use crate::runner::{self, Observer};
use serde::{Deserialize, Serialize};

/// What a fleet run left: the document on rank 0 (None elsewhere), and whether it was
/// interrupted (on every rank).
#[derive(Debug)]
pub struct Outcome {
    pub doc: Option<Document>,
    pub interrupted: bool,
}

/// What rank 0 tells every rank once it has the results.
#[derive(Debug, Serialize, Deserialize)]
struct Verdict {
    failed: Option<Failure>,
    interrupted: bool,
}

/// Measure `cfg` on every rank at once; `cfg.target` may name `{rank}`, `{local_rank}` and
/// `{host}`. Collective: every rank calls it with the same configuration.
pub fn once(fleet: &Fleet, cfg: &RunConfig, observer: &dyn Observer) -> Result<Outcome> {
    let mut mine = cfg.clone();
    mine.target = fleet.expand(&cfg.target);
    measure(fleet, cfg, Some(mine), observer)
}

/// Measure `cfg` with its threads (NBD clients) spread over the ranks: rank r runs
/// [`share_of`] them; a rank with none sits the run out (it meets the others, measures nothing,
/// and the record names it idle). The document's configuration is the whole of `cfg`.
/// Collective: every rank calls it with the same configuration.
pub fn spread(fleet: &Fleet, cfg: &RunConfig, observer: &dyn Observer) -> Result<Outcome> {
    let share = share_of(cfg.threads, fleet.size(), fleet.rank());
    let mine = (share > 0).then(|| {
        let mut c = cfg.clone();
        c.target = fleet.expand(&cfg.target);
        c.threads = share;
        c
    });
    measure(fleet, cfg, mine, observer)
}

/// Rank `rank`'s share of `n` threads spread over `ranks`: n / ranks, one more for the first
/// n mod ranks ranks.
pub fn share_of(n: usize, ranks: usize, rank: usize) -> usize {
    let ranks = ranks.max(1);
    n / ranks + usize::from(rank < n % ranks)
}

/// One fleet run of `whole`, this rank measuring `mine` (None: it sits out).
fn measure(
    fleet: &Fleet,
    whole: &RunConfig,
    mine: Option<RunConfig>,
    observer: &dyn Observer,
) -> Result<Outcome> {
    if whole.stop_when_stable.is_some() {
        return Err(Error::invalid(
            "--stop-when-stable stops each rank on its own; under MPI the ranks measure one common window: give a --runtime instead",
        ));
    }
    let template = whole.target.display().to_string();
    let gate = Gate::new(fleet);
    let (root_doc, sent) = match mine {
        None => {
            gate.attend()?;
            (None, Ok(None))
        }
        Some(mine) => measure_mine(fleet, &gate, mine, observer)?,
    };
    let sent: std::result::Result<Option<Arrival>, Failure> = sent;
    let bytes = serde_json::to_vec(&sent).expect("arrivals serialise");
    let within = MEET_WITHIN + whole.ramp + whole.runtime;
    let gathered = fleet.gather(&bytes, within, "results")?;
    let built = gathered.map(|all| build(fleet, &template, whole, root_doc, all));
    let verdict = match &built {
        Some(Ok(doc)) => Verdict {
            failed: None,
            interrupted: doc.result.ended_by == EndedBy::Interrupted,
        },
        Some(Err(e)) => Verdict {
            failed: Some(Failure::of(e)),
            interrupted: false,
        },
        None => Verdict {
            failed: None,
            interrupted: false,
        },
    };
    let said = fleet.broadcast(
        &serde_json::to_vec(&verdict).expect("verdicts serialise"),
        MEET_WITHIN,
        "verdict",
    )?;
    let verdict: Verdict = serde_json::from_slice(&said)
        .map_err(|e| Error::Mpi(format!("fleet: rank 0 sent an unreadable verdict ({e})")))?;
    if let Some(f) = verdict.failed {
        return Err(match built {
            Some(Err(e)) => e,
            _ => Error::Fleet {
                message: f.message,
                bad_input: f.bad_input,
            },
        });
    }
    Ok(Outcome {
        doc: built.and_then(|b| b.ok()),
        interrupted: verdict.interrupted,
    })
}

/// What this rank brings to rank 0 after measuring `mine`: its document (kept on rank 0 for
/// the run's environment) and its arrival, or its failure. An error here is the run's agreed
/// failure (returned on every rank).
type Measured = (
    Option<Document>,
    std::result::Result<Option<Arrival>, Failure>,
);

fn measure_mine(
    fleet: &Fleet,
    gate: &Gate,
    mine: RunConfig,
    observer: &dyn Observer,
) -> Result<Measured> {
    let local = runner::run_gated(&mine, observer, gate);
    let started = match gate.started() {
        Some(s) => s,
        None => {
            let e = match local {
                Err(e) => e,
                Ok(_) => return Err(Error::Mpi("a fleet run never started".into())),
            };
            if gate.met() {
                // The gate's own (agreed) failure: every rank has the same.
                return Err(e);
            }
            // Failed before the gate: the others wait there for this rank's word.
            return Err(gate
                .meet(Err(e))
                .err()
                .unwrap_or_else(|| Error::Mpi("a failed rank passed the start gate".into())));
        }
    };
    Ok(match local {
        Ok(mut doc) => {
            bound_warning(&mine, &mut doc);
            let me = fleet.me();
            let member = FleetMember {
                rank: me.rank,
                host: me.host.clone(),
                local_rank: me.local_rank,
                target: mine.target.display().to_string(),
                threads: Some(mine.threads),
                clock_offset_ns: started.offset.ns,
                clock_uncertainty_ns: started.offset.uncertainty_ns,
                exchange_offset_ns: started.measured.map(|o| o.ns),
                exchange_uncertainty_ns: started.measured.map(|o| o.uncertainty_ns),
                start_ns: 0,
                late_ns: started.late_ns(),
                realtime_wait: started.realtime,
                environment: doc.environment.clone(),
                result: doc.result.clone(),
            };
            let arrival = Arrival {
                member,
                started_root_ns: started.on_root_clock(),
            };
            (Some(doc), Ok(Some(arrival)))
        }
        Err(e) => (None, Err(Failure::of(&e))),
    })
}

/// Rank 0: the fleet's document from every rank's arrival (ranks that sat out named idle), or
/// the error naming the failed ranks.
fn build(
    fleet: &Fleet,
    template: &str,
    whole: &RunConfig,
    root_doc: Option<Document>,
    all: Vec<Vec<u8>>,
) -> Result<Document> {
    let mut arrivals = Vec::with_capacity(all.len());
    let mut idle = Vec::new();
    let mut failed = Vec::new();
    for (r, b) in all.iter().enumerate() {
        match serde_json::from_slice::<std::result::Result<Option<Arrival>, Failure>>(b) {
            Ok(Ok(Some(a))) => arrivals.push(a),
            Ok(Ok(None)) => idle.push(r),
            Ok(Err(f)) => failed.push((r, f)),
            Err(e) => failed.push((
                r,
                Failure {
                    message: format!("sent an unreadable result ({e})"),
                    bad_input: false,
                },
            )),
        }
    }
    if !failed.is_empty() {
        return Err(fleet.failure(&failed));
    }
    let environment = match (root_doc, arrivals.first()) {
        (Some(d), _) => d.environment,
        (None, Some(a)) => a.member.environment.clone(),
        (None, None) => return Err(Error::Mpi("no rank of the fleet measured".into())),
    };
    let (mut result, mut record) = merge::assemble(template, whole.ramp, NOTICE, arrivals)?;
    record.idle = idle;
    let mut config = whole.clone();
    config.target = fleet.expand(&whole.target);
    // The whole run's name (its threads all the ranks' shares), not rank 0's share's.
    result.label = config.label();
    Ok(Document {
        schema: SCHEMA.into(),
        study: None,
        config,
        environment,
        result,
        targets: Vec::new(),
        monitor: None,
        fleet: Some(Box::new(record)),
    })
}

/// Measure `cfg` `runs` times on every rank (seeds `seed`, `seed + 1`, …); rank 0 gets the
/// median run (by aggregate IOPS) carrying the interval of every figure, and each rank's own
/// interval in its member record — its run-to-run spread. An interrupted run ends the series.
pub fn repeated(
    fleet: &Fleet,
    cfg: &RunConfig,
    runs: usize,
    observer: &dyn Observer,
) -> Result<Option<Document>> {
    let mut docs = Vec::with_capacity(runs);
    for i in 0..runs.max(1) {
        let mut c = cfg.clone();
        c.seed = cfg.seed.wrapping_add(i as u64);
        let o = once(fleet, &c, observer)?;
        if o.interrupted {
            return Ok(o.doc);
        }
        docs.extend(o.doc);
    }
    Ok(combine(docs))
}

/// The median fleet run, with each rank's spread over the runs in its member record.
pub fn combine(docs: Vec<Document>) -> Option<Document> {
    if docs.len() <= 1 {
        return docs.into_iter().next();
    }
    let ranks = docs
        .iter()
        .filter_map(|d| d.fleet.as_ref().map(|f| f.members.len()))
        .min()
        .unwrap_or(0);
    let spreads: Vec<_> = (0..ranks)
        .map(|r| {
            let results: Vec<_> = docs
                .iter()
                .filter_map(|d| d.fleet.as_ref().map(|f| f.members[r].result.clone()))
                .collect();
            crate::repeat::summarize(&results)
        })
        .collect();
    let mut doc = crate::repeat::combine(docs)?;
    if let Some(f) = doc.fleet.as_mut() {
        for (m, s) in f.members.iter_mut().zip(spreads) {
            m.result.repeat = Some(s);
        }
    }
    Some(doc)
}

/// Launchers bind ranks to cores (Open MPI binds each rank to one core when there are no more
/// ranks than cores): a rank with fewer CPUs than threads has its threads queue for them.
fn bound_warning(cfg: &RunConfig, doc: &mut Document) {
    let cpus = crate::env::cpus();
    if cpus < cfg.threads {
        doc.result.warnings.push(format!(
            "this rank may use only {cpus} CPU(s) (the launcher bound it) for {} threads: they queue for the CPU; start it unbound (mpirun --bind-to none, srun --cpu-bind=none)",
            cfg.threads
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::share_of;

    #[test]
    fn clients_are_spread_over_the_ranks_first_ranks_first() {
        let shares = |n, r| (0..r).map(|i| share_of(n, r, i)).collect::<Vec<_>>();
        assert_eq!(shares(16, 3), [6, 5, 5]);
        assert_eq!(shares(4, 3), [2, 1, 1]);
        assert_eq!(shares(1, 3), [1, 0, 0]);
        assert_eq!(shares(8, 4), [2, 2, 2, 2]);
        for (n, r) in [(0, 2), (7, 1), (64, 5), (3, 8)] {
            assert_eq!(shares(n, r).iter().sum::<usize>(), n);
        }
    }
}
