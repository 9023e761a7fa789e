//! Point labels that never overlap: each placed greedily beside its point where its text box
//! (estimated from the font, with a margin) clears every label placed before it, the frame and,
//! if it can, the markers; a label with no free place is dropped, and identical labels at one
//! point are one label.

/// A box in pixels: left, top, width, height.
pub(super) type Rect = (i32, i32, i32, i32);

/// Which side of its box a label's text is anchored to: the side towards its point, so a text
/// narrower than its estimated box still sits beside the point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Align {
    Left,
    Center,
    Right,
}

/// plotters' anchor for an alignment.
pub(super) fn h_pos(a: Align) -> plotters::style::text_anchor::HPos {
    use plotters::style::text_anchor::HPos;
    match a {
        Align::Left => HPos::Left,
        Align::Center => HPos::Center,
        Align::Right => HPos::Right,
    }
}

/// A label's place: its anchor (x at the `align` side, y at the top) and its alignment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Spot {
    pub(super) x: i32,
    pub(super) y: i32,
    pub(super) align: Align,
}

pub(super) fn overlaps(a: Rect, b: Rect) -> bool {
    a.0 < b.0 + b.2 && b.0 < a.0 + a.2 && a.1 < b.1 + b.3 && b.1 < a.1 + a.3
}

/// Places labels within a plot of `w` × `h` pixels.
pub(super) struct Placer {
    w: i32,
    h: i32,
    /// Boxes of the labels placed so far: never overlapped.
    taken: Vec<Rect>,
    /// Boxes avoided when possible (markers).
    soft: Vec<Rect>,
    /// Labels placed: text and point, to merge repeats.
    placed: Vec<(String, (i32, i32))>,
}

impl Placer {
    pub(super) fn new(w: u32, h: u32) -> Placer {
        Placer {
            w: w as i32,
            h: h as i32,
            taken: Vec::new(),
            soft: Vec::new(),
            placed: Vec::new(),
        }
    }

    /// A box labels must never cover (an important marker).
    pub(super) fn block(&mut self, r: Rect) {
        self.taken.push(r);
    }

    /// A box labels avoid when they can (a marker).
    pub(super) fn avoid(&mut self, r: Rect) {
        self.soft.push(r);
    }

    /// Where a `tw` × `th` label of the point at `at` (a marker of
    /// radius `r`) goes, or None: the same text already placed within 12 pixels of this point
    /// (a configuration measured twice), or no free place. The box kept is the text's with a 1-pixel margin all round.
    pub(super) fn place(
        &mut self,
        text: &str,
        at: (i32, i32),
        r: i32,
        tw: i32,
        th: i32,
    ) -> Option<Spot> {
        if self
            .placed
            .iter()
            .any(|(t, p)| t == text && (p.0 - at.0).abs() <= 12 && (p.1 - at.1).abs() <= 12)
        {
            return None;
        }
        let (x, y) = at;
        let r = r + 3;
        use Align::*;
        let candidates = [
            (x + r, y - th - 2, Left),
            (x + r, y + 2, Left),
            (x - r - tw, y - th - 2, Right),
            (x - r - tw, y + 2, Right),
            (x - tw / 2, y - r - th, Center),
            (x - tw / 2, y + r, Center),
            (x + r, y - th / 2, Left),
            (x - r - tw, y - th / 2, Right),
            (x + r, y - 2 * th - 6, Left),
            (x + r, y + th + 6, Left),
            (x - r - tw, y - 2 * th - 6, Right),
            (x - r - tw, y + th + 6, Right),
        ];
        let m = 1;
        let rect = |c: &(i32, i32, Align)| (c.0 - m, c.1 - m, tw + 2 * m, th + 2 * m);
        let inside = |c: &(i32, i32, Align)| {
            c.0 >= 0 && c.1 >= 0 && c.0 + tw <= self.w && c.1 + th <= self.h
        };
        let clear =
            |c: &(i32, i32, Align), boxes: &[Rect]| !boxes.iter().any(|b| overlaps(rect(c), *b));
        let spot = candidates
            .iter()
            .find(|c| inside(c) && clear(c, &self.taken) && clear(c, &self.soft))
            .or_else(|| {
                candidates
                    .iter()
                    .find(|c| inside(c) && clear(c, &self.taken))
            })
            .copied()?;
        self.taken.push(rect(&spot));
        self.placed.push((text.to_string(), at));
        let (left, top, align) = spot;
        Some(Spot {
            x: match align {
                Left => left,
                Center => left + tw / 2,
                Right => left + tw,
            },
            y: top,
            align,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_never_overlap_and_repeats_merge() {
        let mut p = Placer::new(400, 300);
        let mut boxes = Vec::new();
        // Twenty labels on nearly one spot: some placed, none overlapping, the rest dropped.
        for k in 0..20 {
            if let Some(at) = p.place(&format!("QD{k}"), (200 + k % 3, 150), 4, 40, 14) {
                let left = match at.align {
                    Align::Left => at.x,
                    Align::Center => at.x - 20,
                    Align::Right => at.x - 40,
                };
                boxes.push((left, at.y, 40, 14));
            }
        }
        assert!(boxes.len() >= 8 && boxes.len() < 20, "{}", boxes.len());
        for (i, a) in boxes.iter().enumerate() {
            for b in &boxes[i + 1..] {
                assert!(!overlaps(*a, *b), "{a:?} {b:?}");
            }
            assert!(a.0 >= 0 && a.1 >= 0 && a.0 + a.2 <= 400 && a.1 + a.3 <= 300);
        }
        // The same text at the same point is one label ("QD16QD16").
        let mut p = Placer::new(400, 300);
        assert!(p.place("QD16", (100, 100), 4, 40, 14).is_some());
        assert!(p.place("QD16", (106, 98), 4, 40, 14).is_none());
        assert!(p.place("QD32", (101, 100), 4, 40, 14).is_some());
        // Markers are avoided when there is room.
        let mut p = Placer::new(400, 300);
        p.avoid((107, 70, 60, 40));
        let at = p.place("x", (100, 100), 4, 30, 14).unwrap();
        assert_eq!(at.align, Align::Right, "{at:?}");
        assert!(
            !overlaps((at.x - 30, at.y, 30, 14), (107, 70, 60, 40)),
            "{at:?}"
        );
    }
}
