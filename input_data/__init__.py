"""Input data: what the pipelines (preprocessing.py) read, and what goes wrong with it.

Datasets and their files: dataset descriptions (dataset_info.py), the start-up walk of TFRecord
shards and its cache (shard_scan.py), their compression (compression.py), tf.data's reading of
a subset's shards (shard_reader.py), whether each listed file can be opened (shard_files.py),
the masked CRC-32C of record headers (record_crc.py), the
model's classes from --num_classes or labels.txt (class_labels.py), CIFAR-10 batches
(cifar10_data.py), and the converter's hint for a folder of JPEG images (image_folders.py).
Images: the preprocessing ops (image_processing.py). The interface every pipeline implements:
batch types and `InputPipeline` (pipeline_interface.py); the phrases that say how a pipeline
reads and processes its records, for its description and the header (input_phrases.py).
Bad input, named and never silently dropped: a session error of bad records as one line
(data_errors.py), the shard and record behind a "corrupted record" error (corrupt_records.py),
records --skip_corrupt_records skipped (skipped_records.py) and the records after a bad one,
read by their offsets (record_tail.py), the lookup of the first record the pipeline cannot use
(bad_images.py), the record schema the pipelines read and what a record of another one has
wrong (record_schema.py).
"""
