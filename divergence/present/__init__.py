"""What a person sees of a slice table, the same in the dashboard and the report: how numbers,
verdicts and terms read (``formats``), the slice view, data helpers and export (``views``) and
the Plotly figures (``figures``), a model comparison's headline, table and figures
(``compare_views``), and a table in a notebook (``notebook``). Never the miner: what it shows comes in a table.

May import: data, prepare, explain, comparison, table, settings, scores, errors, vocabulary.
"""
