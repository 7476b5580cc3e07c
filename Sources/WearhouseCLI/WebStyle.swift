/// The Health app's one style sheet, served as /style.css (the Content-Security-Policy allows no inline style).
enum WebStyle {
    /// The tab's icon: a heart.
    static let icon =
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 16 16\"><path fill=\"#d6336c\" d=\"M8 14 "
        + "1.5 7.5A3.5 3.5 0 0 1 8 3a3.5 3.5 0 0 1 6.5 4.5z\"/></svg>"

    static let css = """
        :root { --ink: #1d2330; --muted: #667085; --line: #d9dee8; --accent: #d6336c; --calm: #3b6fd6; }
        * { box-sizing: border-box; }
        body { margin: 0; font: 15px/1.45 system-ui, sans-serif; color: var(--ink); background: #f6f7fb; }
        header { background: #fff; border-bottom: 1px solid var(--line); padding: 8px 16px; }
        header nav a { margin-right: 14px; color: var(--ink); text-decoration: none; font-weight: 600; }
        header nav.types a { font-weight: 400; font-size: 13px; color: var(--muted); }
        main { max-width: 1000px; margin: 0 auto; padding: 16px; }
        h1 small, p.big small { color: var(--muted); font-weight: 400; }
        .cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(220px, 1fr)); gap: 12px; }
        .card { background: #fff; border: 1px solid var(--line); border-radius: 10px; padding: 12px 14px; }
        .card h2 { margin: 0; font-size: 15px; } .card h2 a { color: var(--accent); text-decoration: none; }
        .card p.big { font-size: 26px; margin: 6px 0; }
        dl { display: grid; grid-template-columns: auto 1fr; margin: 0; font-size: 13px; }
        dt { color: var(--muted); } dd { margin: 0 0 0 8px; }
        svg.spark { width: 100%; height: 34px; } svg.spark path { fill: none; stroke: var(--accent); stroke-width: 2; }
        svg.chart { width: 100%; background: #fff; border: 1px solid var(--line); border-radius: 10px; }
        .routes { display: flex; flex-wrap: wrap; gap: 12px; } .routes figure { margin: 0; width: 240px; }
        svg.route { width: 240px; height: 240px; background: #fff; border: 1px solid var(--line); border-radius: 10px; }
        svg.route path { fill: none; stroke: var(--accent); stroke-width: 2; } svg.route circle { fill: var(--accent); }
        svg text { font-size: 11px; fill: var(--muted); }
        rect.bar { fill: var(--calm); } rect.band { fill: #f3b2c8; } path.avg { fill: none; stroke: var(--accent); stroke-width: 2; }
        .goal { height: 8px; background: var(--line); border-radius: 4px; overflow: hidden; }
        .goal span { display: block; height: 8px; background: var(--calm); }
        .goal-0 { width: 0; } .goal-10 { width: 10%; } .goal-20 { width: 20%; } .goal-30 { width: 30%; }
        .goal-40 { width: 40%; } .goal-50 { width: 50%; } .goal-60 { width: 60%; } .goal-70 { width: 70%; }
        .goal-80 { width: 80%; } .goal-90 { width: 90%; } .goal-100 { width: 100%; }
        table { border-collapse: collapse; background: #fff; margin: 8px 0; font-size: 13px; }
        th, td { border: 1px solid var(--line); padding: 3px 8px; text-align: left; } td.num { text-align: right; }
        a.tab { display: inline-block; padding: 4px 12px; margin-right: 4px; border: 1px solid var(--line);
          border-radius: 6px; background: #fff; text-decoration: none; color: var(--ink); }
        a.tab.current { background: var(--accent); color: #fff; }
        form { margin: 8px 0; } label { display: inline-block; margin: 4px 10px 4px 0; }
        button { padding: 4px 12px; } button.danger { background: #b42318; color: #fff; border: 0; border-radius: 4px; }
        .error { color: #b42318; font-weight: 600; } .empty, .note { color: var(--muted); }
        pre.stats { background: #fff; border: 1px solid var(--line); padding: 8px; overflow-x: auto; }
        path.zone { stroke: #c2410c; stroke-dasharray: 4 3; stroke-width: 1; } text.zone { fill: #c2410c; }
        path.trend { stroke: #15803d; stroke-width: 2; stroke-dasharray: 6 3; }
        path.line { fill: none; stroke: var(--calm); stroke-width: 2; } circle.dot { fill: var(--calm); }
        rect.stage-0 { fill: #cbd5e1; } rect.stage-1 { fill: #818cf8; } rect.stage-2 { fill: #f59e0b; }
        rect.stage-3 { fill: #60a5fa; } rect.stage-4 { fill: #1e3a8a; } rect.stage-5 { fill: #22d3ee; }
        .pending { background: #fff8e6; border: 1px solid #f5d28c; padding: 6px 10px; border-radius: 6px; }
        """
}
