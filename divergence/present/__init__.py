"""What a person sees of a slice table, the same in the dashboard and the report: how numbers,
verdicts and terms read (``formats``), the slice view, data helpers and export (``views``) and
the Plotly figures (``figures``).

May import: data, prepare, mining, explain, table, scores, errors, vocabulary.
"""
