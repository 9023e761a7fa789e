//! Completion interrupts of a target's device, counted from `/proc/interrupts` at the edges of
//! the measured window: the evidence whether the kernel polled a run's completions (IOPOLL,
//! RWF_HIPRI) or the device raised an interrupt for them. An NVMe controller's queues are the
//! lines `nvme0q0`, `nvme0q1` … (poll queues have no interrupt at all); a virtio disk's are
//! `virtio1-req.0` …; for other drivers the lines cannot be told apart and nothing is counted.
//! One computation ([`CompletionInterrupts`]) feeds the result's JSON, its terminal line and the
//! warning a run gets when it asked for polling and the kernel did not poll.

use crate::source::device::device_of;
use crate::warnings::NOT_POLLED;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// Below this many interrupts per I/O the completions were polled (IOPOLL on an NVMe poll queue
/// raises none; deep interrupt-driven queues, where one interrupt completes several reads, stay
/// well above it).
pub const POLLED_BELOW: f64 = 0.01;
/// From this many interrupts per I/O on, a run that asked for polling was not polled.
pub const NOT_POLLED_FROM: f64 = 0.5;

/// One line of `/proc/interrupts`: the words after its counts and its count over every CPU.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    pub irq: String,
    /// Everything after the counts, word by word: the chip, the hardware IRQ and trigger (one or
    /// two words, by architecture), then the names of the handlers sharing the line.
    pub names: Vec<String>,
    pub count: u64,
}

/// Every numbered interrupt line of `/proc/interrupts` at one moment.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Snapshot {
    pub lines: Vec<Line>,
}

impl Snapshot {
    /// `/proc/interrupts` as it is now (None where it cannot be read).
    pub fn take() -> Option<Snapshot> {
        std::fs::read_to_string("/proc/interrupts")
            .ok()
            .map(|t| Snapshot::parse(&t))
    }

    /// The numbered lines of a `/proc/interrupts` text: the header names the CPUs (one count
    /// column each); after the counts come the chip, the hardware IRQ and trigger, then the
    /// handlers' names, separated by `, ` when several share the line. The architecture's own
    /// lines (`NMI:`, `LOC:` …) are not devices' and are left out. A chip or trigger word never
    /// looks like a queue's name, so every word is kept and matched alike.
    pub fn parse(text: &str) -> Snapshot {
        let mut lines = text.lines();
        let cpus = lines.next().map_or(0, |h| h.split_whitespace().count());
        let mut out = Vec::new();
        for l in lines {
            let Some((irq, rest)) = l.trim_start().split_once(':') else {
                continue;
            };
            if irq.is_empty() || !irq.bytes().all(|b| b.is_ascii_digit()) {
                continue;
            }
            let fields: Vec<&str> = rest.split_whitespace().collect();
            let counts: Vec<u64> = fields
                .iter()
                .take(cpus)
                .map_while(|f| f.parse::<u64>().ok())
                .collect();
            let names = fields[counts.len()..]
                .iter()
                .flat_map(|f| f.split(','))
                .filter(|n| !n.is_empty())
                .map(str::to_string)
                .collect();
            out.push(Line {
                irq: irq.to_string(),
                names,
                count: counts.iter().sum(),
            });
        }
        Snapshot { lines: out }
    }
}

/// Which `/proc/interrupts` lines belong to a device's queues.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Queues {
    /// NVMe controllers (`nvme0`): their lines `nvme0q0`, `nvme0q1` … (admin queue included).
    Nvme(Vec<String>),
    /// A virtio device (`virtio1`): its lines `virtio1-req.0` …, `virtio1-config`.
    Virtio(String),
}

impl Queues {
    /// The queues of the device behind `path`: its disk's `device` in sysfs is an NVMe
    /// controller, an NVMe subsystem (multipath: every controller in it) or a virtio device.
    /// None for devices whose interrupt lines cannot be named (loop, null_blk, SCSI …).
    pub fn of(path: &Path) -> Option<Queues> {
        let dev = device_of(path)?;
        let parent = std::fs::canonicalize(dev.disk_dir.join("device")).ok()?;
        Queues::for_parent(&parent)
    }

    /// The queues of a disk whose sysfs `device` link resolves to `parent`.
    fn for_parent(parent: &Path) -> Option<Queues> {
        let name = parent.file_name()?.to_string_lossy().into_owned();
        if is_numbered(&name, "nvme") {
            return Some(Queues::Nvme(vec![name]));
        }
        if is_numbered(&name, "nvme-subsys") {
            let mut ctrls: Vec<String> = std::fs::read_dir(parent)
                .ok()?
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| is_numbered(n, "nvme"))
                .collect();
            ctrls.sort();
            return (!ctrls.is_empty()).then_some(Queues::Nvme(ctrls));
        }
        is_numbered(&name, "virtio").then_some(Queues::Virtio(name))
    }

    /// How every output names the device whose interrupts were counted (`nvme0`, `nvme0+nvme1`).
    pub fn device(&self) -> String {
        match self {
            Queues::Nvme(c) => c.join("+"),
            Queues::Virtio(v) => v.clone(),
        }
    }

    /// Whether an interrupt handler's name is one of these queues'.
    pub fn owns(&self, handler: &str) -> bool {
        match self {
            Queues::Nvme(ctrls) => ctrls.iter().any(|c| {
                handler
                    .strip_prefix(c.as_str())
                    .and_then(|q| q.strip_prefix('q'))
                    .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
            }),
            Queues::Virtio(v) => handler
                .strip_prefix(v.as_str())
                .is_some_and(|r| r.starts_with('-')),
        }
    }

    /// The interrupts of these queues in a snapshot (a line shared with other handlers counts
    /// once).
    pub fn count(&self, s: &Snapshot) -> u64 {
        s.lines
            .iter()
            .filter(|l| l.names.iter().any(|n| self.owns(n)))
            .map(|l| l.count)
            .sum()
    }
}

/// `prefix` followed by digits only (`nvme0`, not `nvme0n1`).
fn is_numbered(name: &str, prefix: &str) -> bool {
    name.strip_prefix(prefix)
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// The completion interrupts of a run: how many the target's device raised in the measured window
/// and how many per I/O.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CompletionInterrupts {
    /// The device whose queues' interrupt lines were counted (`nvme0`: lines `nvme0q*`).
    pub device: String,
    /// Interrupts those lines counted over the measured window, every CPU. Other I/O on the same
    /// device in that window counts too.
    pub interrupts: u64,
    /// Requests readlab completed in the same window (one I/O each to the device).
    pub requests: u64,
    /// `interrupts / requests`: about 1 when every completion raised an interrupt (less with
    /// interrupt coalescing at depth), about 0 when the kernel polled for completions.
    pub interrupts_per_io: f64,
}

impl CompletionInterrupts {
    /// The interrupts `queues` raised between two snapshots, per request of the window (None
    /// without a request: nothing to divide by).
    pub fn between(
        queues: &Queues,
        start: &Snapshot,
        end: &Snapshot,
        requests: u64,
    ) -> Option<CompletionInterrupts> {
        if requests == 0 {
            return None;
        }
        let interrupts = queues.count(end).saturating_sub(queues.count(start));
        Some(CompletionInterrupts {
            device: queues.device(),
            interrupts,
            requests,
            interrupts_per_io: interrupts as f64 / requests as f64,
        })
    }

    /// Whether the completions were polled (almost no interrupt per I/O).
    pub fn polled(&self) -> bool {
        self.interrupts_per_io < POLLED_BELOW
    }

    /// What every output says: `nvme0: 0.00 interrupts per I/O (1 in 6,912): polled`.
    pub fn words(&self) -> String {
        format!(
            "{}: {:.2} interrupts per I/O ({} in {} I/Os): {}",
            self.device,
            self.interrupts_per_io,
            grouped(self.interrupts),
            grouped(self.requests),
            if self.polled() {
                "polled"
            } else {
                "interrupt-driven"
            }
        )
    }

    /// The warning of a run that asked for polled completions (`asked`: `--iopoll`, `--hipri`)
    /// when the device raised about one interrupt per I/O all the same.
    pub fn not_polled(&self, asked: &str) -> Option<String> {
        (self.interrupts_per_io >= NOT_POLLED_FROM).then(|| {
            format!(
                "{asked} was asked, but {NOT_POLLED}: {} raised {:.2} interrupts per I/O ({} \
                 in {} I/Os), so these reads completed by interrupt like any other{}",
                self.device,
                self.interrupts_per_io,
                grouped(self.interrupts),
                grouped(self.requests),
                if asked == "--hipri" {
                    " (this kernel does not poll synchronous RWF_HIPRI reads; io_uring's \
                     --iopoll does poll)"
                } else {
                    ""
                }
            )
        })
    }
}

/// A count with its thousands apart (`6,912`).
fn grouped(n: u64) -> String {
    crate::units::grouped(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 6.12 guest's /proc/interrupts with two NVMe controllers, the first with two I/O queues
    /// (nvme.poll_queues=2 adds poll queues, which have no line), plus the architecture's lines.
    const GUEST: &str = "           CPU0       CPU1       
  0:        102          0   IO-APIC   2-edge      timer
  1:          0          9   IO-APIC   1-edge      i8042
 24:         16          0  PCI-MSIX-0000:00:02.0   0-edge      nvme0q0
 25:          0         16  PCI-MSIX-0000:00:03.0   0-edge      nvme1q0
 26:        795          0  PCI-MSIX-0000:00:02.0   1-edge      nvme0q1
 27:          0       1253  PCI-MSIX-0000:00:02.0   2-edge      nvme0q2
 28:          1          0  PCI-MSIX-0000:00:03.0   1-edge      nvme1q1
 30:          4          5  PCI-MSIX-0000:00:04.0   1-edge      virtio1-req.0
 31:          3          0  IO-APIC  11-fasteoi   nvme10q1, uhci_hcd:usb1
NMI:          0          0   Non-maskable interrupts
LOC:        886        763   Local timer interrupts
ERR:          0
";

    #[test]
    fn lines_sum_every_cpu_and_keep_shared_names() {
        let s = Snapshot::parse(GUEST);
        assert_eq!(s.lines.len(), 9, "{s:?}");
        let l = s.lines.iter().find(|l| l.irq == "27").unwrap();
        assert_eq!(l.names, ["PCI-MSIX-0000:00:02.0", "2-edge", "nvme0q2"]);
        assert_eq!(l.count, 1253);
        let l = s.lines.iter().find(|l| l.irq == "30").unwrap();
        assert_eq!(l.count, 9);
        let shared = s.lines.iter().find(|l| l.irq == "31").unwrap();
        assert_eq!(shared.names[2..], ["nvme10q1", "uhci_hcd:usb1"]);
        assert!(s.lines.iter().all(|l| l.irq.parse::<u32>().is_ok()));
    }

    #[test]
    fn a_controller_counts_its_own_queues_only() {
        let s = Snapshot::parse(GUEST);
        let nvme0 = Queues::Nvme(vec!["nvme0".into()]);
        assert_eq!(nvme0.count(&s), 16 + 795 + 1253);
        assert_eq!(Queues::Nvme(vec!["nvme1".into()]).count(&s), 17);
        // nvme1 is not nvme10, nvme0n1 is no queue
        assert_eq!(Queues::Nvme(vec!["nvme10".into()]).count(&s), 3);
        assert!(!nvme0.owns("nvme0n1") && !nvme0.owns("nvme0q") && nvme0.owns("nvme0q12"));
        let both = Queues::Nvme(vec!["nvme0".into(), "nvme1".into()]);
        assert_eq!(both.count(&s), 16 + 795 + 1253 + 17);
        assert_eq!(both.device(), "nvme0+nvme1");
        assert_eq!(Queues::Virtio("virtio1".into()).count(&s), 9);
        assert!(!Queues::Virtio("virtio1".into()).owns("virtio10-req.0"));
    }

    #[test]
    fn the_device_behind_a_disk_from_its_sysfs_parent() {
        let q = |p: &str| Queues::for_parent(Path::new(p));
        assert_eq!(
            q("/sys/devices/pci0000:00/0000:00:02.0/nvme/nvme0"),
            Some(Queues::Nvme(vec!["nvme0".into()]))
        );
        assert_eq!(
            q("/sys/devices/pci0000:00/0000:00:04.0/virtio1"),
            Some(Queues::Virtio("virtio1".into()))
        );
        assert_eq!(q("/sys/devices/virtual/block/loop0"), None);
        assert_eq!(
            q("/sys/devices/pci0000:00/0000:00:1f.2/ata1/host0/target0:0:0/0:0:0:0"),
            None
        );
    }

    #[test]
    fn polled_and_interrupt_driven_runs_say_so() {
        let queues = Queues::Nvme(vec!["nvme0".into()]);
        let before = Snapshot::parse(GUEST);
        let mut after = before.clone();
        let bump = |s: &mut Snapshot, irq: &str, by: u64| {
            s.lines.iter_mut().find(|l| l.irq == irq).unwrap().count += by;
        };
        bump(&mut after, "24", 1);
        bump(&mut after, "28", 5000); // another controller's
        let polled = CompletionInterrupts::between(&queues, &before, &after, 6912).unwrap();
        assert!(polled.polled());
        assert_eq!(
            polled.words(),
            "nvme0: 0.00 interrupts per I/O (1 in 6,912 I/Os): polled"
        );
        assert_eq!(polled.not_polled("--iopoll"), None);

        bump(&mut after, "26", 2500);
        bump(&mut after, "27", 2625);
        let irq = CompletionInterrupts::between(&queues, &before, &after, 5200).unwrap();
        assert!(!irq.polled());
        assert_eq!(
            irq.words(),
            "nvme0: 0.99 interrupts per I/O (5,126 in 5,200 I/Os): interrupt-driven"
        );
        let w = irq.not_polled("--hipri").unwrap();
        assert!(
            w.contains(NOT_POLLED) && w.contains("0.99") && w.contains("RWF_HIPRI"),
            "{w}"
        );
        assert!(!irq.not_polled("--iopoll").unwrap().contains("RWF_HIPRI"));
        assert_eq!(
            CompletionInterrupts::between(&queues, &before, &after, 0),
            None
        );
    }
}
