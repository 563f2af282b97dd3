"""Reading and showing text: words (Unicode-aware split, stop words, stems), sentences (the
segmenter: headings, running headers, lists, prose) and markup (untrusted document, web and
model text made safe for Streamlit's Markdown). Pure functions over strings; imports only the
foundation, so retrieval, answers and the UI can all rely on one split of words.
"""
