"""What a person sees of a slice table, the same in the dashboard and the report: how numbers,
verdicts and terms read (``formats``), the sorted slice view (``views``), the headline and finding
cards (``cards``), every Plotly figure (``figures``), files to download (``export``), a new file's
columns (``columns``), a model comparison's headline, table and figures (``compare_views``), a
table in a notebook (``notebook``) and a result table written to a CSV or Parquet file
(``table_output``). Never the miner: what it shows comes in a table.

May import: data, prepare, explain, comparison, table, settings, scores, errors, vocabulary.
"""
